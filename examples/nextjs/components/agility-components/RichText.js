import { renderHTML } from "@agility/nextjs"

export default function RichText({ module }) {
	const { contentID, fields } = module
	return <section className="container prose" data-agility-component={contentID} dangerouslySetInnerHTML={renderHTML(fields.Content)} />
}
