import { renderHTML } from "@agility/nextjs"

export default function ContactDetails({ module }) {
	const { contentID, fields } = module
	return (
		<section className="container contact" data-agility-component={contentID}>
			<h2>{fields.Heading}</h2>
			<address dangerouslySetInnerHTML={renderHTML(fields.Address)} />
			<ul>
				{fields.Phone && (
					<li>
						<a href={`tel:${fields.Phone.replace(/[^+\d]/g, "")}`}>{fields.Phone}</a>
					</li>
				)}
				{fields.Email && (
					<li>
						<a href={fields.Email}>{fields.Email.replace(/^mailto:/, "")}</a>
					</li>
				)}
				{fields.MapLink && (
					<li>
						<a href={fields.MapLink}>OpenStreetMap</a>
					</li>
				)}
			</ul>
			{fields.OpeningHours && <p>{fields.OpeningHours}</p>}
		</section>
	)
}
