// Package nextjs is the test of the Next.js example site beside it (a
// starter site on @agility/nextjs that reads edgecms): it builds the site
// against a running edgecms (the binary's serve, over TLS, with the demo
// instance) and checks the HTML of every page in both locales, the
// ?ContentID= redirect, preview through the Studio's preview links,
// revalidation by the Published webhook, and a preview build at the
// default rate limits. The site itself is JavaScript; see README.md.
package nextjs
