// @agility/nextjs has no base URL setting: it calls the SDK's getApi with a
// guid, from which @agility/content-fetch derives Agility's host. The one
// change that points the whole site at edgecms is a module alias: every
// import of "@agility/content-fetch" (the site's and @agility/nextjs's)
// gets lib/edgecms/content-fetch.js, whose getApi adds baseUrl from
// AGILITY_BASE_URL. Next.js documents both forms: turbopack.resolveAlias
// (next build and next dev) and webpack's resolve.alias (--webpack).
import { fileURLToPath } from "node:url"

const wrapper = "./lib/edgecms/content-fetch.js"

/** @type {import('next').NextConfig} */
const nextConfig = {
	reactStrictMode: true,
	turbopack: {
		resolveAlias: { "@agility/content-fetch": wrapper },
	},
	webpack(config) {
		config.resolve.alias["@agility/content-fetch$"] = fileURLToPath(new URL(wrapper, import.meta.url))
		return config
	},
}

export default nextConfig
