import MainTemplate from "./MainTemplate"
import SidebarTemplate from "./SidebarTemplate"

// The page templates of the site, by the name of their edgecms page model.
const templates = { MainTemplate, SidebarTemplate }

export function getPageTemplate(name) {
	const key = Object.keys(templates).find((k) => k.toLowerCase() === String(name || "").toLowerCase())
	return key ? templates[key] : null
}
