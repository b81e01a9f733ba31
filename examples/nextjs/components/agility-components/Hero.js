import { AgilityPic } from "@agility/nextjs"
import SiteLink from "components/common/SiteLink"

export default function Hero({ module, languageCode }) {
	const { contentID, fields } = module
	return (
		<section className="hero" data-agility-component={contentID}>
			{fields.Image && (
				<AgilityPic
					image={fields.Image}
					className="hero-image"
					priority
					fallbackWidth={1200}
					sources={[
						{ media: "(min-width: 1280px)", width: 1920 },
						{ media: "(min-width: 640px)", width: 1280 },
						{ media: "(max-width: 639px)", width: 640 },
					]}
				/>
			)}
			<div className="hero-text">
				<h1>{fields.Heading}</h1>
				{fields.Subheading && <p className="lead">{fields.Subheading}</p>}
				{fields.ButtonText && fields.ButtonLink && (
					<SiteLink href={fields.ButtonLink} locale={languageCode} className="button">
						{fields.ButtonText}
					</SiteLink>
				)}
			</div>
		</section>
	)
}
