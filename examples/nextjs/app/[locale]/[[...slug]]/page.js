import { notFound, redirect } from "next/navigation"
import { getAgilityPaths } from "@agility/nextjs/node"
import { getPageTemplate } from "components/agility-pages"
import { getAgilityPage } from "lib/cms/getAgilityPage"
import { defaultLocale, locales, sitePath, splitPath } from "lib/cms/locales"

// Every page of the sitemap is built ahead (generateStaticParams) and kept
// until a Published webhook revalidates what it shows (app/api/revalidate);
// pages added later are rendered on their first request. Draft mode (a
// preview link) renders each request from the preview API. force-static
// also lets a preview build (EDGECMS_PREVIEW_BUILD=1) prerender drafts,
// which the SDK fetches with no-store.
export const revalidate = 3600
export const dynamic = "force-static"
export const dynamicParams = true

/** The paths of every locale's sitemap, from @agility/nextjs. */
export async function generateStaticParams() {
	const paths = await getAgilityPaths({ preview: process.env.EDGECMS_PREVIEW_BUILD === "1", locales, defaultLocale })
	const params = locales.map((locale) => ({ locale, slug: [] }))
	for (const p of paths) {
		const { locale, path } = splitPath(p)
		params.push({ locale, slug: path.split("/").filter(Boolean) })
	}
	console.log(`edgecms: building ${params.length} pages in ${locales.length} locales`)
	return params
}

async function load(params) {
	const { locale, slug } = await params
	if (!locales.includes(locale)) notFound()
	const data = await getAgilityPage(locale, "/" + (slug || []).join("/"))
	return { locale, data }
}

export async function generateMetadata({ params }) {
	const { data } = await load(params)
	if (!data.page) return {}
	return {
		title: `${data.sitemapNode.title} | Northwind Roasters`,
		description: data.dynamicPageItem?.fields?.Excerpt || data.page.seo?.metaDescription || undefined,
		keywords: data.page.seo?.metaKeywords || undefined,
	}
}

export default async function Page({ params }) {
	const { locale, data } = await load(params)
	if (data.sitemapNode?.redirect?.url) redirect(data.sitemapNode.redirect.url)
	if (data.notFound || !data.page || data.sitemapNode?.isFolder) notFound()
	const Template = getPageTemplate(data.pageTemplateName)
	if (!Template) throw new Error(`No page template for ${data.pageTemplateName}: add it to components/agility-pages`)
	return (
		<div data-agility-page={data.page.pageID} data-agility-dynamic-content={data.sitemapNode.contentID} data-path={sitePath(locale, data.sitemapNode.path)}>
			<Template {...data} />
		</div>
	)
}
