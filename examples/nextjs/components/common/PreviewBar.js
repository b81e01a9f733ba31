/** Says that the page shows drafts, with the way out of draft mode. */
export default function PreviewBar({ draft }) {
	return (
		<div className="preview-bar" role="status">
			Preview: this page shows drafts from edgecms.{" "}
			{draft && <a href="/api/preview/exit">Leave the preview</a>}
		</div>
	)
}
