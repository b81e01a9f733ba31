import { AgilityPic } from "@agility/nextjs"
import { getLinkedItems, getSitemapFlat } from "lib/cms/content"
import { sitePath } from "lib/cms/locales"
import { agilityConfig } from "@agility/nextjs"

const date = (locale, value) => new Intl.DateTimeFormat(locale, { dateStyle: "long", timeZone: "America/Montreal" }).format(new Date(value))

export default async function PostListing({ module, languageCode }) {
	const item = module
	const [all, sitemap] = await Promise.all([
		getLinkedItems({ value: item.fields.Posts, ids: item.fields.Posts_ValueField, languageCode }),
		getSitemapFlat({ channelName: agilityConfig.channelName, languageCode }),
	])
	// Newest first, sorted here: the container's own order is the variant
	// edgecms keeps in its store.
	const posts = [...all].sort((a, b) => new Date(b.fields.PostDate) - new Date(a.fields.PostDate)).slice(0, Number(item.fields.PageSize) || 10)
	// A post's URL is the path of the dynamic page node that shows it.
	const pathOf = {}
	for (const [path, node] of Object.entries(sitemap || {})) if (node.contentID) pathOf[node.contentID] = path
	return (
		<section className="container posts" data-agility-component={item.contentID}>
			{item.fields.Heading && <h2>{item.fields.Heading}</h2>}
			<ul className="cards">
				{posts.map((post) => (
					<li key={post.contentID} className="card">
						{post.fields.Image && <AgilityPic image={post.fields.Image} fallbackWidth={600} sources={[{ media: "(min-width: 640px)", width: 600 }]} />}
						<p className="meta">
							{post.fields.Category?.fields?.Title} · {post.fields.PostDate && date(languageCode, post.fields.PostDate)}
						</p>
						<h3>
							<a href={pathOf[post.contentID] ? sitePath(languageCode, pathOf[post.contentID]) : "#"}>{post.fields.Title}</a>
						</h3>
						<p>{post.fields.Excerpt}</p>
					</li>
				))}
			</ul>
		</section>
	)
}
