export default function NotFound() {
	return (
		<section className="container">
			<h1>Page not found</h1>
			<p>
				<a href="/">Back to the home page</a>
			</p>
		</section>
	)
}
