// @agility/content-fetch, pointed at edgecms.
//
// next.config.mjs aliases the module "@agility/content-fetch" to this file,
// for the site's own code and for @agility/nextjs alike. @agility/nextjs
// calls getApi({guid, apiKey, isPreview}) with no way to pass a base URL,
// and the SDK then derives Agility's host from the guid; here getApi adds
// baseUrl from AGILITY_BASE_URL (the edgecms address and the instance,
// e.g. https://cms.example.com/demo). Without AGILITY_BASE_URL nothing
// changes: the SDK talks to Agility as before.
//
// The real SDK is imported by its file, a path the alias leaves alone.
import * as sdk from "@agility/content-fetch/dist/node.js"

const real = sdk.getApi ?? sdk.default?.getApi

/**
 * getApi of the SDK, with baseUrl from AGILITY_BASE_URL unless given, and
 * the SDK's log level from AGILITY_LOG_LEVEL (debug: a line per request).
 */
export function getApi(config) {
	const baseUrl = config?.baseUrl || process.env.AGILITY_BASE_URL || undefined
	const logLevel = config?.logLevel || process.env.AGILITY_LOG_LEVEL || undefined
	return real({ ...config, ...(baseUrl && { baseUrl }), ...(logLevel && { logLevel }) })
}

export default { getApi }
