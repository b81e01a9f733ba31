import { AgilityPic, renderHTML } from "@agility/nextjs"
import { getContentItem, getLinkedItems } from "lib/cms/content"
import { sitePath } from "lib/cms/locales"

const date = (locale, value) => new Intl.DateTimeFormat(locale, { dateStyle: "long", timeZone: "America/Montreal" }).format(new Date(value))

/** The post a dynamic page shows (read again under its own tag). */
export default async function PostDetails({ module, dynamicPageItem, sitemapNode, languageCode }) {
	if (!dynamicPageItem) return <p className="container">Post not found.</p>
	const settings = module
	const post = await getContentItem({ contentID: dynamicPageItem.contentID, languageCode })
	const tags = await getLinkedItems({ value: post.fields.Tags, ids: post.fields.Tags_ValueField, languageCode })
	const f = post.fields
	const parent = sitemapNode.path.split("/").slice(0, -1).join("/") || "/"
	return (
		<article className="container post" data-agility-component={post.contentID}>
			<p className="meta">
				{f.Category?.fields?.Title} · {f.PostDate && date(languageCode, f.PostDate)} · {f.ReadingMinutes} min
			</p>
			<h1>{f.Title}</h1>
			{settings.fields.ShowAuthor === "true" && f.Author?.fields && <p className="author">{f.Author.fields.Name}, {f.Author.fields.Role}</p>}
			{f.Image && (
				<AgilityPic
					image={f.Image}
					className="post-image"
					fallbackWidth={800}
					sources={[
						{ media: "(min-width: 1280px)", width: 1200 },
						{ media: "(min-width: 640px)", width: 800 },
						{ media: "(max-width: 639px)", width: 640 },
					]}
				/>
			)}
			<div className="prose" dangerouslySetInnerHTML={renderHTML(f.Body)} />
			{tags.length > 0 && (
				<ul className="tags">
					{tags.map((t) => (
						<li key={t.contentID}>{t.fields.Title}</li>
					))}
				</ul>
			)}
			<p>
				<a href={sitePath(languageCode, parent)}>{settings.fields.BackLinkText || "Back"}</a>
			</p>
		</article>
	)
}
