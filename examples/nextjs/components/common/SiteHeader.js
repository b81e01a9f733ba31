import { agilityConfig } from "@agility/nextjs"
import { getSitemapNested } from "lib/cms/content"
import { locales, sitePath } from "lib/cms/locales"

const names = { en: "English", fr: "Français" }

/** The site's name, its menu (the nested sitemap's first level) and the locales. */
export default async function SiteHeader({ locale }) {
	const nodes = (await getSitemapNested({ channelName: agilityConfig.channelName, languageCode: locale })) || []
	// The first page of the sitemap is the home page, at the site's root.
	const home = nodes[0]?.path
	return (
		<header className="site-header">
			<a className="brand" href={sitePath(locale, "/")}>
				Northwind Roasters
			</a>
			<nav aria-label="Main">
				<ul>
					{nodes
						.filter((n) => n.visible?.menu && !n.isFolder)
						.map((n) => (
							<li key={n.pageID}>
								<a href={sitePath(locale, n.path === home ? "/" : n.path)}>{n.menuText || n.title}</a>
							</li>
						))}
				</ul>
			</nav>
			<nav aria-label="Languages">
				<ul>
					{locales
						.filter((l) => l !== locale)
						.map((l) => (
							<li key={l}>
								<a href={sitePath(l, "/")} hrefLang={l}>
									{names[l.split("-")[0]] || l}
								</a>
							</li>
						))}
				</ul>
			</nav>
		</header>
	)
}
