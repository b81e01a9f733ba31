import "server-only"
import { getAgilitySDK } from "./getAgilitySDK"

// Reads of the Fetch API, each cached under the tags that
// app/api/revalidate refreshes when edgecms sends a Published webhook:
//   agility-content-<contentID>-<locale>      an item
//   agility-content-<referenceName>-<locale>  a list
//   agility-sitemap-flat-<locale>, agility-sitemap-nested-<locale>
//
// They ask for the variants edgecms keeps rendered in its store (an item
// at depth 1, a container's list pages of 10 in its own order, the
// sitemaps), so that a build reads everything from the edge. Another
// variant (a sort, another page size) is rendered by the origin the first
// time, within the fetch key's rate limit (EDGECMS_FETCH_RATE_LIMIT), and
// stored from then on.

export async function getContentItem({ contentID, languageCode }) {
	const sdk = await getAgilitySDK([`agility-content-${contentID}-${languageCode}`])
	return sdk.getContentItem({ contentID, languageCode })
}

/** Every item of a container, in its order: its list pages of 10. */
export async function getAllItems({ referenceName, languageCode }) {
	const sdk = await getAgilitySDK([`agility-content-${referenceName.toLowerCase()}-${languageCode}`])
	const items = []
	for (let skip = 0; ; skip += 10) {
		const page = await sdk.getContentList({ referenceName, languageCode, take: 10, skip })
		items.push(...(page?.items || []))
		if (!page || skip + 10 >= page.totalCount) return items
	}
}

export async function getSitemapFlat({ channelName, languageCode }) {
	const sdk = await getAgilitySDK([`agility-sitemap-flat-${languageCode}`])
	return sdk.getSitemapFlat({ channelName, languageCode })
}

export async function getSitemapNested({ channelName, languageCode }) {
	const sdk = await getAgilitySDK([`agility-sitemap-nested-${languageCode}`])
	return sdk.getSitemapNested({ channelName, languageCode })
}

export async function getGallery({ galleryID, languageCode }) {
	const sdk = await getAgilitySDK([`agility-gallery-${galleryID}`])
	return sdk.getGallery({ galleryID, languageCode })
}

/**
 * The items of a list field, in the field's order (or the whole
 * container): value is the field as read (expanded items, or a reference
 * {referencename, sortids}), ids its companion <name>_ValueField (a
 * selection's contentIDs; none for the whole container). They are read
 * again as the container's list, so that a publish of any of them
 * refreshes what shows them.
 */
export async function getLinkedItems({ value, ids, languageCode }) {
	const expanded = Array.isArray(value) ? value : null
	const ref = expanded ? expanded[0]?.properties?.referenceName : value?.referencename
	if (!ref) return expanded || []
	const items = await getAllItems({ referenceName: ref, languageCode })
	const order = ids ?? (value?.fulllist === false ? value.sortids : null)
	if (!order) return items
	const byID = new Map(items.map((i) => [i.contentID, i]))
	return String(order)
		.split(",")
		.map((id) => byID.get(Number(id)))
		.filter(Boolean)
}
