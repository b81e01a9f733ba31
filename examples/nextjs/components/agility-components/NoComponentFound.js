export default function NoComponentFound({ module }) {
	return <p className="container missing">No component of this site shows {module?.properties?.definitionName ?? "this component"}.</p>
}
