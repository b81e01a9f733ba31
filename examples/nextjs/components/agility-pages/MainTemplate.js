import { ContentZone } from "@agility/nextjs"
import { getModule } from "components/agility-components"

export default function MainTemplate(props) {
	return (
		<div className="template-main">
			<ContentZone name="MainContentZone" {...props} getModule={getModule} />
		</div>
	)
}
