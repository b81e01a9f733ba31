package demo

import (
	"strconv"

	"github.com/edgecms/edgecms/content"
)

// This file is the demo site itself: Northwind Roasters, a fictional coffee
// roaster and café on boulevard Saint-Laurent in Montréal. Every field type
// is used at least once; every text has an English and a French version.

// Field helpers keep the model tables short.
func text(name string) content.Field { return content.Field{Name: name, Type: content.TypeText} }

func field(name string, t content.FieldType) content.Field { return content.Field{Name: name, Type: t} }

func required(f content.Field) content.Field { f.Required = true; return f }

func shared(f content.Field) content.Field { f.Shared = true; return f }

func link(name string, t content.FieldType, container string) content.Field {
	return content.Field{Name: name, Type: t, Container: container}
}

// contentModels are the models of items, in an order where every container
// a field links to belongs to an earlier model.
var contentModels = []content.Model{
	{Name: "Category", Kind: "content", Fields: content.Fields{
		required(text("Title")), text("Slug"), text("Description"),
	}},
	{Name: "Author", Kind: "content", Fields: content.Fields{
		required(text("Name")), text("Role"), field("Bio", content.TypeHTML),
		field("Photo", content.TypeImage), field("Website", content.TypeLink),
	}},
	{Name: "Tag", Kind: "content", Fields: content.Fields{
		required(text("Title")), text("Slug"),
	}},
	{Name: "Product", Kind: "content", Fields: content.Fields{
		required(text("Title")), required(text("Slug")),
		required(shared(text("SKU"))),
		shared(field("Price", content.TypeDecimal)),
		shared(field("WeightGrams", content.TypeNumber)),
		shared(field("InStock", content.TypeBoolean)),
		shared(field("AvailableFrom", content.TypeDate)),
		text("Origin"), text("Notes"), field("Description", content.TypeHTML),
		field("Image", content.TypeImage),
		link("Category", content.TypeItem, "categories"),
	}},
	{Name: "Post", Kind: "content", Fields: content.Fields{
		required(text("Title")), required(text("Slug")), text("Excerpt"),
		field("Body", content.TypeHTML), field("PostDate", content.TypeDate),
		field("ReadingMinutes", content.TypeNumber), field("Featured", content.TypeBoolean),
		field("Image", content.TypeImage),
		link("Category", content.TypeItem, "categories"),
		link("Author", content.TypeItem, "authors"),
		link("Tags", content.TypeList, "tags"),
	}},
}

// componentModels are the models of the components in page zones.
var componentModels = []content.Model{
	{Name: "Hero", Kind: "component", Fields: content.Fields{
		required(text("Heading")), text("Subheading"), field("Image", content.TypeImage),
		text("ButtonText"), field("ButtonLink", content.TypeLink),
	}},
	{Name: "FeaturedProducts", Kind: "component", Fields: content.Fields{
		text("Heading"), link("Products", content.TypeList, "products"), field("ShowPrices", content.TypeBoolean),
	}},
	{Name: "RichText", Kind: "component", Fields: content.Fields{
		required(field("Content", content.TypeHTML)),
	}},
	{Name: "PostListing", Kind: "component", Fields: content.Fields{
		text("Heading"), link("Posts", content.TypeList, "posts"), field("PageSize", content.TypeNumber),
	}},
	{Name: "PostDetails", Kind: "component", Fields: content.Fields{
		field("ShowAuthor", content.TypeBoolean), text("BackLinkText"),
	}},
	{Name: "PhotoGallery", Kind: "component", Fields: content.Fields{
		text("Heading"), field("Photos", content.TypeGallery),
	}},
	{Name: "ContactDetails", Kind: "component", Fields: content.Fields{
		text("Heading"), field("Address", content.TypeHTML), text("Phone"),
		field("Email", content.TypeLink), field("MapLink", content.TypeLink), text("OpeningHours"),
	}},
}

// pageModels are the page templates and their zones.
var pageModels = []pageModel{
	{name: "MainTemplate", zones: []string{"MainContentZone"}},
	{name: "SidebarTemplate", zones: []string{"MainContentZone", "SidebarContentZone"}},
}

// galleries are the demo's galleries. They start empty: the demo has no
// object store to upload photos into (upload them through the management
// API's /assets and add them with /galleries/{id}/assets).
var galleries = []struct{ name, description string }{
	{name: "Inside the roastery", description: "Photos of the roastery and the café"},
}

// photo is an image on the Unsplash CDN, cropped to width x height.
func photo(id string, width, height int, filesize int64, label tr) image {
	return image{
		url:   "https://images.unsplash.com/photo-" + id + "?auto=format&fit=crop&w=" + strconv.Itoa(width) + "&h=" + strconv.Itoa(height) + "&q=80",
		width: width, height: height, filesize: filesize, label: label,
	}
}

// containers hold the items, in an order where every item links only to
// items of earlier containers (or earlier in its own).
var containers = []container{
	{referenceName: "categories", model: "Category", items: []item{
		{key: "single-origin", values: values{
			"Title":       tr{"Single Origin", "Origine unique"},
			"Slug":        tr{"single-origin", "origine-unique"},
			"Description": tr{"Coffees from one farm or washing station, roasted to show where they grew.", "Des cafés d'une seule ferme ou station de lavage, torréfiés pour révéler leur terroir."},
		}},
		{key: "blends", values: values{
			"Title":       tr{"Espresso Blends", "Mélanges espresso"},
			"Slug":        tr{"espresso-blends", "melanges-espresso"},
			"Description": tr{"Balanced blends built for the espresso machine and for milk drinks.", "Des mélanges équilibrés, pensés pour la machine espresso et les boissons au lait."},
		}},
		{key: "gear", values: values{
			"Title":       tr{"Brewing Gear", "Matériel d'infusion"},
			"Slug":        tr{"brewing-gear", "materiel-d-infusion"},
			"Description": tr{"The tools we use behind our own counter.", "Les outils que nous utilisons derrière notre propre comptoir."},
		}},
	}},
	{referenceName: "authors", model: "Author", items: []item{
		{key: "maya", values: values{
			"Name": "Maya Tremblay",
			"Role": tr{"Head Roaster", "Torréfactrice en chef"},
			"Bio": tr{
				"<p>Maya has roasted coffee for twelve years, the last six on our 15-kilo Probat. She cups every batch before it leaves the roastery.</p>",
				"<p>Maya torréfie du café depuis douze ans, dont les six dernières années sur notre Probat de 15 kilos. Elle déguste chaque lot avant qu'il ne quitte la brûlerie.</p>",
			},
			"Photo":   photo("1494790108377-be9c29b29330", 800, 800, 96214, tr{"Portrait of Maya Tremblay", "Portrait de Maya Tremblay"}),
			"Website": tr{"/about-us", "/a-propos"},
		}},
		{key: "julien", values: values{
			"Name": "Julien Okafor",
			"Role": tr{"Café Manager and Barista Trainer", "Gérant du café et formateur barista"},
			"Bio": tr{
				"<p>Julien runs the café and teaches our weekend brewing classes. Ask him about water chemistry at your own risk.</p>",
				"<p>Julien dirige le café et anime nos ateliers d'infusion de fin de semaine. Parlez-lui de la chimie de l'eau à vos risques et périls.</p>",
			},
			"Photo":   photo("1500648767791-00dcc994a43e", 800, 800, 88731, tr{"Portrait of Julien Okafor", "Portrait de Julien Okafor"}),
			"Website": tr{"/contact", "/nous-joindre"},
		}},
	}},
	{referenceName: "tags", model: "Tag", items: []item{
		{key: "brewing", values: values{"Title": tr{"Brewing", "Infusion"}, "Slug": tr{"brewing", "infusion"}}},
		{key: "origins", values: values{"Title": tr{"Origins", "Origines"}, "Slug": tr{"origins", "origines"}}},
		{key: "roasting", values: values{"Title": tr{"Roasting", "Torréfaction"}, "Slug": tr{"roasting", "torrefaction"}}},
		{key: "sustainability", values: values{"Title": tr{"Sustainability", "Développement durable"}, "Slug": tr{"sustainability", "developpement-durable"}}},
		{key: "recipes", values: values{"Title": tr{"Recipes", "Recettes"}, "Slug": tr{"recipes", "recettes"}}},
	}},
	{referenceName: "products", model: "Product", items: []item{
		{key: "ethiopia", values: values{
			"Title":         tr{"Ethiopia Yirgacheffe Kochere", "Éthiopie Yirgacheffe Kochere"},
			"Slug":          tr{"ethiopia-yirgacheffe-kochere", "ethiopie-yirgacheffe-kochere"},
			"SKU":           "NWR-ETH-340",
			"Price":         21.50,
			"WeightGrams":   340,
			"InStock":       true,
			"AvailableFrom": "2025-09-02T00:00:00-04:00",
			"Origin":        tr{"Gedeo Zone, Ethiopia", "Zone de Gedeo, Éthiopie"},
			"Notes":         tr{"Jasmine, bergamot, lemon curd", "Jasmin, bergamote, crème de citron"},
			"Description": tr{
				"<p>A washed heirloom coffee grown at 1,900 metres by smallholders who bring their cherries to the Kochere station. We roast it light to keep its floral lift.</p>",
				"<p>Un café lavé de variétés anciennes, cultivé à 1 900 mètres par de petits producteurs qui livrent leurs cerises à la station de Kochere. Nous le torréfions clair pour préserver ses notes florales.</p>",
			},
			"Image":    photo("1559056199-641a0ac8b55e", 1200, 1200, 214388, tr{"A bag of Ethiopia Yirgacheffe Kochere", "Un sac d'Éthiopie Yirgacheffe Kochere"}),
			"Category": ref("single-origin"),
		}},
		{key: "colombia", values: values{
			"Title":         tr{"Colombia Huila La Plata", "Colombie Huila La Plata"},
			"Slug":          tr{"colombia-huila-la-plata", "colombie-huila-la-plata"},
			"SKU":           "NWR-COL-340",
			"Price":         19.00,
			"WeightGrams":   340,
			"InStock":       true,
			"AvailableFrom": "2025-06-16T00:00:00-04:00",
			"Origin":        tr{"La Plata, Huila, Colombia", "La Plata, Huila, Colombie"},
			"Notes":         tr{"Red apple, panela, milk chocolate", "Pomme rouge, panela, chocolat au lait"},
			"Description": tr{
				"<p>Caturra and Castillo from the Rojas family farm, fermented for 36 hours before washing. Sweet and forgiving in any brewer.</p>",
				"<p>Du Caturra et du Castillo de la ferme de la famille Rojas, fermentés 36 heures avant le lavage. Doux et indulgent, quelle que soit la méthode d'infusion.</p>",
			},
			"Image":    photo("1514432324607-a09d9b4aefdd", 1200, 1200, 198402, tr{"A cup of Colombia Huila La Plata", "Une tasse de Colombie Huila La Plata"}),
			"Category": ref("single-origin"),
		}},
		{key: "kenya", values: values{
			"Title":         tr{"Kenya Nyeri Gatomboya AA", "Kenya Nyeri Gatomboya AA, lot de saison"},
			"Slug":          tr{"kenya-nyeri-gatomboya-aa", "kenya-nyeri-gatomboya-aa"},
			"SKU":           "NWR-KEN-340",
			"Price":         24.00,
			"WeightGrams":   340,
			"InStock":       false,
			"AvailableFrom": "2025-03-10T00:00:00-04:00",
			"Origin":        tr{"Nyeri County, Kenya", "Comté de Nyeri, Kenya"},
			"Notes":         tr{"Blackcurrant, grapefruit, cane sugar", "Cassis, pamplemousse, sucre de canne"},
			"Description": tr{
				"<p>SL28 and SL34 grown on red volcanic soil. Juicy and bright; this season's lot is sold out, and the next arrives in spring.</p>",
				"<p>Du SL28 et du SL34 cultivés sur un sol volcanique rouge. Juteux et vif; le lot de cette saison est épuisé, le prochain arrive au printemps.</p>",
			},
			"Image":    photo("1511920170033-f8396924c348", 1200, 1200, 187950, tr{"Pour-over of Kenya Nyeri", "Infusion filtre du Kenya Nyeri"}),
			"Category": ref("single-origin"),
		}},
		{key: "house-espresso", values: values{
			"Title":         tr{"Northwind House Espresso", "Espresso maison Northwind"},
			"Slug":          tr{"northwind-house-espresso", "espresso-maison-northwind"},
			"SKU":           "NWR-ESP-340",
			"Price":         18.50,
			"WeightGrams":   340,
			"InStock":       true,
			"AvailableFrom": "2024-01-15T00:00:00-05:00",
			"Origin":        tr{"Brazil and Colombia", "Brésil et Colombie"},
			"Notes":         tr{"Dark chocolate, hazelnut, caramel", "Chocolat noir, noisette, caramel"},
			"Description": tr{
				"<p>The blend we pull all day in our café: a natural Brazil for body and a washed Colombia for sweetness. Great straight, better in a flat white.</p>",
				"<p>Le mélange que nous servons toute la journée au café : un Brésil nature pour le corps et une Colombie lavée pour la douceur. Excellent seul, encore meilleur en flat white.</p>",
			},
			"Image":    photo("1510707577719-ae7c14805e3a", 1200, 1200, 176214, tr{"A shot of Northwind House Espresso", "Un espresso maison Northwind"}),
			"Category": ref("blends"),
		}},
		{key: "decaf", values: values{
			"Title":         tr{"Night Shift Decaf", "Déca Quart de nuit"},
			"Slug":          tr{"night-shift-decaf", "deca-quart-de-nuit"},
			"SKU":           "NWR-DEC-340",
			"Price":         19.50,
			"WeightGrams":   340,
			"InStock":       true,
			"AvailableFrom": "2025-01-20T00:00:00-05:00",
			"Origin":        tr{"Peru, Swiss Water process", "Pérou, procédé Swiss Water"},
			"Notes":         tr{"Cocoa, brown sugar, plum", "Cacao, cassonade, prune"},
			"Description": tr{
				"<p>Decaffeinated with water only, near Vancouver, then roasted a touch darker so it holds up in milk. All the ritual, none of the jitters.</p>",
				"<p>Décaféiné à l'eau seulement, près de Vancouver, puis torréfié un peu plus foncé pour bien se marier au lait. Tout le rituel, sans la nervosité.</p>",
			},
			"Image":    photo("1497935586351-b67a49e012bf", 1200, 1200, 165873, tr{"A latte made with Night Shift Decaf", "Un latte au Déca Quart de nuit"}),
			"Category": ref("blends"),
		}},
		{key: "dripper", values: values{
			"Title":         tr{"Ceramic Pour-Over Dripper", "Filtre à infusion en céramique"},
			"Slug":          tr{"ceramic-pour-over-dripper", "filtre-a-infusion-en-ceramique"},
			"SKU":           "NWR-GEAR-DRP",
			"Price":         34.00,
			"WeightGrams":   420,
			"InStock":       true,
			"AvailableFrom": "2024-11-01T00:00:00-04:00",
			"Origin":        tr{"Made in Mino, Japan", "Fabriqué à Mino, au Japon"},
			"Notes":         tr{"Fits #2 paper filters, one to four cups", "Compatible avec les filtres papier nº 2, une à quatre tasses"},
			"Description": tr{
				"<p>The cone our baristas use for every filter coffee on the menu. Spiral ribs keep the paper off the walls for an even, steady draw-down.</p>",
				"<p>Le cône qu'utilisent nos baristas pour chaque café filtre du menu. Ses nervures en spirale éloignent le papier des parois pour un écoulement régulier.</p>",
			},
			"Image":    photo("1495474472287-4d71bcdd2085", 1200, 1200, 203117, tr{"The ceramic dripper on a glass server", "Le filtre en céramique sur une carafe en verre"}),
			"Category": ref("gear"),
		}},
	}},
	{referenceName: "posts", model: "Post", items: []item{
		{key: "light-roast", values: values{
			"Title":   tr{"How We Roast a Light Roast", "Comment nous torréfions un café clair"},
			"Slug":    tr{"how-we-roast-a-light-roast", "comment-nous-torrefions-un-cafe-clair"},
			"Excerpt": tr{"Charge temperature, development time, and why we stop earlier than you might think.", "Température de charge, temps de développement, et pourquoi nous arrêtons plus tôt que vous ne le pensez."},
			"Body": tr{
				"<p>A light roast is not an under-roasted coffee. We charge the drum hot, keep the rate of rise falling steadily, and drop the beans about ninety seconds after first crack.</p><p>Every profile starts on paper and ends at the cupping table: we roast three versions of each new coffee and keep the one that tastes most like where it grew.</p>",
				"<p>Un café clair n'est pas un café pas assez torréfié. Nous chargeons le tambour bien chaud, nous gardons une montée de température qui ralentit régulièrement, et nous sortons les grains environ quatre-vingt-dix secondes après le premier craquement.</p><p>Chaque profil commence sur papier et se termine à la table de dégustation : nous torréfions trois versions de chaque nouveau café et gardons celle qui goûte le plus son terroir.</p>",
			},
			"PostDate":       "2025-09-18T09:00:00-04:00",
			"ReadingMinutes": 6,
			"Featured":       true,
			"Image":          photo("1447933601403-0c6688de566e", 1600, 1067, 312640, tr{"Beans cooling after a light roast", "Des grains qui refroidissent après une torréfaction claire"}),
			"Category":       ref("single-origin"),
			"Author":         ref("maya"),
			"Tags":           refs{"roasting", "origins"},
		}},
		{key: "kochere-visit", values: values{
			"Title":   tr{"A Week at the Kochere Washing Station", "Une semaine à la station de lavage de Kochere"},
			"Slug":    tr{"a-week-at-the-kochere-washing-station", "une-semaine-a-la-station-de-lavage-de-kochere"},
			"Excerpt": tr{"What we learned sorting cherries with the people who grow our favourite Ethiopian coffee.", "Ce que nous avons appris en triant des cerises avec les gens qui cultivent notre café éthiopien préféré."},
			"Body": tr{
				"<p>In November, Maya spent a week in Gedeo during the harvest. Cherries arrive on foot and by motorbike from hundreds of small plots, and are sorted by hand before the pulper.</p><p>We have bought from this station for five years, and we now pay the pickers' cooperative a quality premium directly.</p>",
				"<p>En novembre, Maya a passé une semaine à Gedeo pendant la récolte. Les cerises arrivent à pied et à moto de centaines de petites parcelles, et sont triées à la main avant la dépulpeuse.</p><p>Nous achetons à cette station depuis cinq ans, et nous versons maintenant une prime de qualité directement à la coopérative des cueilleurs.</p>",
			},
			"PostDate":       "2025-10-02T08:30:00-04:00",
			"ReadingMinutes": 8,
			"Featured":       false,
			"Image":          photo("1442512595331-e89e73853f31", 1600, 1067, 298455, tr{"Coffee cherries drying on raised beds", "Des cerises de café qui sèchent sur des lits surélevés"}),
			"Category":       ref("single-origin"),
			"Author":         ref("maya"),
			"Tags":           refs{"origins", "sustainability"},
		}},
		{key: "espresso-at-home", values: values{
			"Title":   tr{"Dialling In Espresso at Home", "Réussir son espresso à la maison"},
			"Slug":    tr{"dialling-in-espresso-at-home", "reussir-son-espresso-a-la-maison"},
			"Excerpt": tr{"A simple recipe to start from, and the one variable to change at a time.", "Une recette simple pour commencer, et la seule variable à changer à la fois."},
			"Body": tr{
				"<p>Start with 18 grams in and 36 grams out in about 28 seconds. Taste it. Sour and thin? Grind finer. Bitter and dry? Grind coarser.</p><p>Change only the grind until it tastes good, then play with the ratio. Write everything down: tomorrow's espresso will thank you.</p>",
				"<p>Commencez avec 18 grammes de café pour 36 grammes d'espresso, en 28 secondes environ. Goûtez. Acide et léger? Moulez plus fin. Amer et sec? Moulez plus grossier.</p><p>Ne changez que la mouture jusqu'à ce que ce soit bon, puis jouez avec le ratio. Notez tout : l'espresso de demain vous remerciera.</p>",
			},
			"PostDate":       "2025-10-21T10:00:00-04:00",
			"ReadingMinutes": 5,
			"Featured":       true,
			"Image":          photo("1509042239860-f550ce710b93", 1600, 1067, 276301, tr{"An espresso pouring into a cup", "Un espresso qui coule dans une tasse"}),
			"Category":       ref("blends"),
			"Author":         ref("julien"),
			"Tags":           refs{"brewing", "recipes"},
		}},
		{key: "above-fair-trade", values: values{
			"Title":   tr{"Why We Pay Well Above Fair Trade", "Pourquoi nous payons bien au-delà du prix équitable"},
			"Slug":    tr{"why-we-pay-well-above-fair-trade", "pourquoi-nous-payons-bien-au-dela-du-prix-equitable"},
			"Excerpt": tr{"Our prices, the farm-gate prices behind them, and what a fair price really means.", "Nos prix, les prix payés à la ferme derrière eux, et ce que veut vraiment dire un prix juste."},
			"Body": tr{
				"<p>Last year we paid an average of 4.10 US dollars per pound of green coffee, more than twice the fair trade minimum. We publish the price of every lot we buy.</p><p>Good coffee costs more to grow. Paying for it is how we make sure there is still good coffee to roast in ten years.</p>",
				"<p>L'an dernier, nous avons payé en moyenne 4,10 dollars américains la livre de café vert, plus du double du prix minimum équitable. Nous publions le prix de chaque lot que nous achetons.</p><p>Le bon café coûte plus cher à produire. Le payer à sa juste valeur, c'est s'assurer qu'il y aura encore du bon café à torréfier dans dix ans.</p>",
			},
			"PostDate":       "2025-11-05T09:00:00-05:00",
			"ReadingMinutes": 7,
			"Featured":       false,
			"Image":          photo("1498804103079-a6351b050096", 1600, 1067, 254982, tr{"Green coffee in jute sacks", "Du café vert dans des sacs de jute"}),
			"Category":       ref("single-origin"),
			"Author":         ref("maya"),
			"Tags":           refs{"sustainability"},
		}},
		{key: "cold-brew", values: values{
			"Title":   tr{"Cold Brew, the Easy Way", "Le café infusé à froid, tout simplement"},
			"Slug":    tr{"cold-brew-the-easy-way", "le-cafe-infuse-a-froid-tout-simplement"},
			"Excerpt": tr{"One jar, one filter, twelve hours in the fridge.", "Un pot, un filtre, douze heures au frigo."},
			"Body": tr{
				"<p>Mix 100 grams of coarsely ground coffee with one litre of cold water in a jar. Stir, cover, and leave it in the fridge for twelve to sixteen hours.</p><p>Strain through a paper filter, then dilute one to one with water or milk. It keeps for a week, if it lasts that long.</p>",
				"<p>Mélangez 100 grammes de café moulu grossièrement avec un litre d'eau froide dans un pot. Remuez, couvrez et laissez au frigo de douze à seize heures.</p><p>Filtrez avec un filtre en papier, puis diluez à parts égales avec de l'eau ou du lait. Il se conserve une semaine, s'il dure aussi longtemps.</p>",
			},
			"PostDate":       "2025-06-12T11:00:00-04:00",
			"ReadingMinutes": 3,
			"Featured":       false,
			"Image":          photo("1461023058943-07fcbe16d735", 1600, 1067, 231776, tr{"A glass of cold brew with ice", "Un verre de café infusé à froid avec des glaçons"}),
			"Category":       ref("gear"),
			"Author":         ref("julien"),
			"Tags":           refs{"brewing", "recipes"},
		}},
	}},
}

// pages is the page tree of the `website` channel, parents before children.
// Page names (and so paths) are made from the titles in each locale.
var pages = []page{
	{
		key: "home", model: "MainTemplate",
		title:       tr{"Home", "Accueil"},
		description: tr{"Northwind Roasters: small-batch specialty coffee roasted in Montréal.", "Northwind Roasters : du café de spécialité torréfié en petits lots à Montréal."},
		components: []component{
			{zone: "MainContentZone", module: "Hero", values: values{
				"Heading":    tr{"Small-batch coffee, roasted in Montréal", "Du café torréfié en petits lots, à Montréal"},
				"Subheading": tr{"Traceable beans, roasted every Tuesday and Friday, delivered within three days.", "Des grains traçables, torréfiés chaque mardi et vendredi, livrés en trois jours."},
				"Image":      photo("1447933601403-0c6688de566e", 1920, 1080, 402113, tr{"Freshly roasted coffee beans", "Des grains de café fraîchement torréfiés"}),
				"ButtonText": tr{"Shop our coffees", "Découvrir nos cafés"},
				"ButtonLink": tr{"/shop", "/boutique"},
			}},
			{zone: "MainContentZone", module: "FeaturedProducts", values: values{
				"Heading":    tr{"This season's favourites", "Nos coups de cœur de la saison"},
				"Products":   refs{"ethiopia", "colombia", "house-espresso"},
				"ShowPrices": true,
			}},
			{zone: "MainContentZone", module: "RichText", values: values{
				"Content": tr{
					"<h2>Come by for a cup</h2><p>Our café shares a wall with the roastery. Watch a batch come out of the drum while we pour your coffee.</p>",
					"<h2>Passez prendre un café</h2><p>Notre café partage un mur avec la brûlerie. Regardez un lot sortir du tambour pendant que nous préparons votre tasse.</p>",
				},
			}},
		},
	},
	{
		key: "about", model: "SidebarTemplate",
		title:       tr{"About Us", "À propos"},
		description: tr{"Who we are and how we buy and roast our coffee.", "Qui nous sommes, et comment nous achetons et torréfions notre café."},
		components: []component{
			{zone: "MainContentZone", module: "RichText", values: values{
				"Content": tr{
					"<h2>Our story</h2><p>Northwind Roasters started in 2014 with a 1-kilo roaster in a Mile End garage. Today we roast about 60 tonnes a year for our café, our subscribers and forty restaurants across Quebec.</p><p>We buy from the same farms year after year, pay for quality, and tell you exactly where every bag comes from.</p>",
					"<h2>Notre histoire</h2><p>Northwind Roasters a commencé en 2014 avec une brûleuse de 1 kilo dans un garage du Mile End. Aujourd'hui, nous torréfions environ 60 tonnes par année pour notre café, nos abonnés et une quarantaine de restaurants partout au Québec.</p><p>Nous achetons aux mêmes fermes année après année, nous payons pour la qualité, et nous vous disons exactement d'où vient chaque sac.</p>",
				},
			}},
			{zone: "MainContentZone", module: "PhotoGallery", values: values{
				"Heading": tr{"Inside the roastery", "Dans la brûlerie"},
				"Photos":  gallery("Inside the roastery"),
			}},
			{zone: "SidebarContentZone", module: "RichText", values: values{
				"Content": tr{
					"<h3>Quick facts</h3><ul><li>Founded in 2014</li><li>14 people</li><li>12 producing partners in 7 countries</li></ul>",
					"<h3>En bref</h3><ul><li>Fondée en 2014</li><li>14 employés</li><li>12 producteurs partenaires dans 7 pays</li></ul>",
				},
			}},
		},
	},
	{
		key: "shop", model: "MainTemplate",
		title:       tr{"Shop", "Boutique"},
		description: tr{"Buy our coffees and brewing gear online.", "Achetez nos cafés et notre matériel d'infusion en ligne."},
		components: []component{
			{zone: "MainContentZone", module: "FeaturedProducts", values: values{
				"Heading":    tr{"All coffees and gear", "Tous nos cafés et accessoires"},
				"Products":   wholeContainer{},
				"ShowPrices": true,
			}},
		},
	},
	{
		key: "blog", model: "MainTemplate",
		title:       tr{"Blog", "Blogue"},
		description: tr{"Stories from the roastery, brewing guides and trips to origin.", "Nouvelles de la brûlerie, guides d'infusion et voyages à l'origine."},
		components: []component{
			{zone: "MainContentZone", module: "PostListing", values: values{
				"Heading":  tr{"From the roastery", "Nouvelles de la brûlerie"},
				"Posts":    wholeContainer{},
				"PageSize": 10,
			}},
		},
	},
	{
		key: "post", parent: "blog", model: "MainTemplate", hidden: true,
		title:       tr{"Post", "Article"},
		description: tr{"A post from the Northwind Roasters blog.", "Un article du blogue de Northwind Roasters."},
		dynamic:     &content.Dynamic{ReferenceName: "posts", PathField: "Slug"},
		components: []component{
			{zone: "MainContentZone", module: "PostDetails", values: values{
				"ShowAuthor":   true,
				"BackLinkText": tr{"Back to the blog", "Retour au blogue"},
			}},
		},
	},
	{
		key: "resources", model: "MainTemplate", folder: true,
		title:       tr{"Resources", "Ressources"},
		description: tr{"Guides and links for coffee lovers and professionals.", "Guides et liens pour les amateurs et les professionnels du café."},
	},
	{
		key: "brewing-guide", parent: "resources", model: "SidebarTemplate",
		title:       tr{"Brewing Guide", "Guide d'infusion"},
		description: tr{"Our recipes for filter, espresso and French press.", "Nos recettes pour le filtre, l'espresso et la cafetière à piston."},
		components: []component{
			{zone: "MainContentZone", module: "RichText", values: values{
				"Content": tr{
					"<h2>Our house recipes</h2><ul><li><strong>Pour-over:</strong> 15 g of coffee, 250 g of water at 94 °C, 3 minutes.</li><li><strong>French press:</strong> 30 g of coffee, 500 g of water, 4 minutes, then press slowly.</li><li><strong>Espresso:</strong> 18 g in, 36 g out, 26 to 30 seconds.</li></ul>",
					"<h2>Nos recettes maison</h2><ul><li><strong>Filtre :</strong> 15 g de café, 250 g d'eau à 94 °C, 3 minutes.</li><li><strong>Cafetière à piston :</strong> 30 g de café, 500 g d'eau, 4 minutes, puis pressez lentement.</li><li><strong>Espresso :</strong> 18 g de café, 36 g en tasse, de 26 à 30 secondes.</li></ul>",
				},
			}},
			{zone: "SidebarContentZone", module: "FeaturedProducts", values: values{
				"Heading":    tr{"The gear we use", "Le matériel que nous utilisons"},
				"Products":   refs{"dripper"},
				"ShowPrices": false,
			}},
		},
	},
	{
		key: "wholesale", parent: "resources", model: "MainTemplate",
		title:       tr{"Wholesale", "Vente en gros"},
		description: tr{"Coffee, training and equipment support for cafés and restaurants.", "Café, formation et soutien technique pour les cafés et les restaurants."},
		components: []component{
			{zone: "MainContentZone", module: "RichText", values: values{
				"Content": tr{
					"<h2>Serve Northwind in your café</h2><p>We supply cafés, restaurants and offices with fresh coffee every week, train your team at our lab, and help you choose and maintain your equipment.</p><p>Write to <a href=\"mailto:wholesale@northwindroasters.example\">wholesale@northwindroasters.example</a> for our price list.</p>",
					"<h2>Servez Northwind dans votre café</h2><p>Nous approvisionnons chaque semaine des cafés, des restaurants et des bureaux en café frais, nous formons votre équipe dans notre laboratoire et nous vous aidons à choisir et à entretenir votre équipement.</p><p>Écrivez à <a href=\"mailto:gros@northwindroasters.example\">gros@northwindroasters.example</a> pour recevoir notre liste de prix.</p>",
				},
			}},
		},
	},
	{
		key: "sca", parent: "resources", model: "MainTemplate",
		title:       tr{"Specialty Coffee Association", "Association du café de spécialité (SCA)"},
		description: tr{"The Specialty Coffee Association's website.", "Le site de l'Association du café de spécialité."},
		redirect:    "https://sca.coffee/",
	},
	{
		key: "contact", model: "SidebarTemplate",
		title:       tr{"Contact", "Nous joindre"},
		description: tr{"Visit the café, call us or write to us.", "Visitez le café, appelez-nous ou écrivez-nous."},
		components: []component{
			{zone: "MainContentZone", module: "ContactDetails", values: values{
				"Heading":      tr{"Visit the café and roastery", "Visitez le café et la brûlerie"},
				"Address":      tr{"<p>5120 Saint-Laurent Boulevard<br>Montréal, Quebec H2T 1R8</p>", "<p>5120, boulevard Saint-Laurent<br>Montréal (Québec) H2T 1R8</p>"},
				"Phone":        "+1 514-555-0142",
				"Email":        tr{"mailto:hello@northwindroasters.example", "mailto:bonjour@northwindroasters.example"},
				"MapLink":      "https://www.openstreetmap.org/?mlat=45.5231&mlon=-73.5953#map=17/45.5231/-73.5953",
				"OpeningHours": tr{"Monday to Friday 7 a.m. to 6 p.m., weekends 8 a.m. to 5 p.m.", "Du lundi au vendredi de 7 h à 18 h, les fins de semaine de 8 h à 17 h"},
			}},
			{zone: "SidebarContentZone", module: "RichText", values: values{
				"Content": tr{
					"<p>Orders and subscriptions: we answer within one business day. For wholesale, see our <a href=\"/resources/wholesale\">wholesale page</a>.</p>",
					"<p>Commandes et abonnements : nous répondons en un jour ouvrable. Pour la vente en gros, consultez notre <a href=\"/ressources/vente-en-gros\">page de vente en gros</a>.</p>",
				},
			}},
		},
	},
}
