import { sitePath } from "lib/cms/locales"

/** A link from content: a path of the site (given without the locale) or a URL. */
export default function SiteLink({ href, locale, children, ...rest }) {
	const to = href.startsWith("/") && !href.startsWith("//") ? sitePath(locale, href) : href
	return (
		<a href={to} {...rest}>
			{children}
		</a>
	)
}
