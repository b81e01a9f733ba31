import { ContentZone } from "@agility/nextjs"
import { getModule } from "components/agility-components"

export default function SidebarTemplate(props) {
	return (
		<div className="template-sidebar container">
			<div className="main-zone">
				<ContentZone name="MainContentZone" {...props} getModule={getModule} />
			</div>
			<aside className="sidebar-zone">
				<ContentZone name="SidebarContentZone" {...props} getModule={getModule} />
			</aside>
		</div>
	)
}
