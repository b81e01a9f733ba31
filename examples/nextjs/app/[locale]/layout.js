import { notFound } from "next/navigation"
import SiteHeader from "components/common/SiteHeader"
import PreviewBar from "components/common/PreviewBar"
import { getAgilityContext } from "lib/cms/getAgilityContext"
import { locales } from "lib/cms/locales"
import "styles/globals.css"

export function generateStaticParams() {
	return locales.map((locale) => ({ locale }))
}

/** The root layout: every page of a locale, with the site's header. */
export default async function LocaleLayout({ children, params }) {
	const { locale } = await params
	if (!locales.includes(locale)) notFound()
	const { isDraftMode, isPreview } = await getAgilityContext()
	return (
		<html lang={locale.split("-")[0]}>
			<body>
				{isPreview && <PreviewBar draft={isDraftMode} />}
				<SiteHeader locale={locale} />
				<main>{children}</main>
				<footer className="site-footer">
					<p>Northwind Roasters, 5120 Saint-Laurent, Montréal. Content from edgecms.</p>
				</footer>
			</body>
		</html>
	)
}
