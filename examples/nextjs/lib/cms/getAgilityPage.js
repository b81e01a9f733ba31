import "server-only"
import { cache } from "react"
import { getAgilityPageProps } from "@agility/nextjs/node"
import { getAgilityContext } from "./getAgilityContext"
import { defaultLocale } from "./locales"

/**
 * The page at a sitemap path ("/" for the first page of the sitemap) in
 * locale, as @agility/nextjs resolves it, once per request: the sitemap
 * node, the page with its zones (each component's item in it, with the
 * items it links to), the dynamic page's item, and the template's name.
 *
 * The page is read at contentLinkDepth 2 with expandAllContentLinks, the
 * variant of every page that edgecms renders into its store when it is
 * published: a build reads it from the edge, never from the origin.
 */
export const getAgilityPage = cache(async (locale, path) => {
	const { isPreview } = await getAgilityContext()
	return getAgilityPageProps({
		params: { slug: path === "/" ? [""] : path.split("/").filter(Boolean) },
		preview: isPreview,
		locale,
		defaultLocale,
		apiOptions: { contentLinkDepth: 2, expandAllContentLinks: true },
	})
})
