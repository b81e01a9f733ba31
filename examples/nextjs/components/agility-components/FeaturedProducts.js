import { AgilityPic } from "@agility/nextjs"
import { getLinkedItems } from "lib/cms/content"

const price = (locale, value) => new Intl.NumberFormat(locale, { style: "currency", currency: "CAD" }).format(Number(value))

export default async function FeaturedProducts({ module, languageCode }) {
	const item = module
	const products = await getLinkedItems({ value: item.fields.Products, ids: item.fields.Products_ValueField, languageCode })
	const showPrices = item.fields.ShowPrices === "true"
	return (
		<section className="container products" data-agility-component={item.contentID}>
			{item.fields.Heading && <h2>{item.fields.Heading}</h2>}
			<ul className="cards">
				{products.map((p) => (
					<li key={p.contentID} className="card">
						{p.fields.Image && <AgilityPic image={p.fields.Image} fallbackWidth={400} sources={[{ media: "(min-width: 640px)", width: 400 }]} />}
						<h3>{p.fields.Title}</h3>
						{p.fields.Notes && <p>{p.fields.Notes}</p>}
						{showPrices && p.fields.Price && <p className="price">{price(languageCode, p.fields.Price)}</p>}
					</li>
				))}
			</ul>
		</section>
	)
}
