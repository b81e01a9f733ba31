import "server-only"
import { draftMode } from "next/headers"
import { agilityConfig } from "@agility/nextjs"

/**
 * Whether this request reads drafts: in draft mode (a preview link), in
 * `next dev`, or in a preview build (EDGECMS_PREVIEW_BUILD=1, a staging
 * site built from the preview API).
 */
export async function getAgilityContext() {
	const isDevelopmentMode = process.env.NODE_ENV === "development"
	const previewBuild = process.env.EDGECMS_PREVIEW_BUILD === "1"
	const { isEnabled } = await draftMode()
	return {
		sitemap: agilityConfig.channelName,
		isPreview: isEnabled || isDevelopmentMode || previewBuild,
		isDevelopmentMode,
		isDraftMode: isEnabled,
	}
}
