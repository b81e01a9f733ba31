import { getGallery } from "lib/cms/content"

export default async function PhotoGallery({ module, languageCode }) {
	const { contentID, fields } = module
	const gallery = fields.Photos?.galleryid ? await getGallery({ galleryID: fields.Photos.galleryid, languageCode }) : null
	const media = gallery?.media || []
	return (
		<section className="container gallery" data-agility-component={contentID}>
			{fields.Heading && <h2>{fields.Heading}</h2>}
			{media.length === 0 ? (
				<p className="muted">{gallery?.description}</p>
			) : (
				<ul className="photos">
					{media.map((m) => (
						<li key={m.mediaID}>
							<img src={`${m.url}?w=400`} alt={m.metaData?.Description || m.fileName} loading="lazy" />
						</li>
					))}
				</ul>
			)}
		</section>
	)
}
