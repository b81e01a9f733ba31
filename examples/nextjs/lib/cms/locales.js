import { agilityConfig } from "@agility/nextjs"

// The site's locales (AGILITY_LOCALES, the default first), lower case as the
// SDK sends them. Pages of the default locale live at /path, the others at
// /<locale>/path, as getAgilityPaths makes them.

export const locales = agilityConfig.locales.map((l) => l.trim().toLowerCase())
export const defaultLocale = locales[0]

/** The site path of a sitemap path in a locale. */
export function sitePath(locale, path) {
	const p = path === "/" ? "" : path
	return locale === defaultLocale ? p || "/" : `/${locale}${p}`
}

/** Splits a site path into its locale and the sitemap path. */
export function splitPath(path) {
	const [first, ...rest] = path.split("/").filter(Boolean)
	if (first && locales.includes(first.toLowerCase()) && first.toLowerCase() !== defaultLocale) {
		return { locale: first.toLowerCase(), path: "/" + rest.join("/") }
	}
	return { locale: defaultLocale, path: path || "/" }
}
