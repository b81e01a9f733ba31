import ContactDetails from "./ContactDetails"
import FeaturedProducts from "./FeaturedProducts"
import Hero from "./Hero"
import NoComponentFound from "./NoComponentFound"
import PhotoGallery from "./PhotoGallery"
import PostDetails from "./PostDetails"
import PostListing from "./PostListing"
import RichText from "./RichText"

// The components of the site, by the name of their edgecms component model.
// Each gets its item in `module` (the page is read with its components'
// items); the ones that show other items read them again under those
// items' cache tags (lib/cms/content.js).
const modules = { ContactDetails, FeaturedProducts, Hero, PhotoGallery, PostDetails, PostListing, RichText }

export function getModule(name) {
	const key = Object.keys(modules).find((k) => k.toLowerCase() === String(name || "").toLowerCase())
	return key ? modules[key] : NoComponentFound
}
