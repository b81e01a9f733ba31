import "server-only"
import agility from "@agility/content-fetch"
import { agilityConfig } from "@agility/nextjs"
import { getAgilityContext } from "./getAgilityContext"

/**
 * An SDK client for this request, with the preview key when it reads
 * drafts, and its fetches cached under tags (published content only: the
 * SDK never caches preview), so that app/api/revalidate can refresh them.
 */
export async function getAgilitySDK(tags) {
	const { isPreview } = await getAgilityContext()
	const client = agility.getApi({
		guid: agilityConfig.guid,
		apiKey: isPreview ? agilityConfig.previewAPIKey : agilityConfig.fetchAPIKey,
		isPreview,
		debug: agilityConfig.debug,
	})
	client.config.fetchConfig = { next: { tags, revalidate: agilityConfig.defaultCacheDuration } }
	return client
}
