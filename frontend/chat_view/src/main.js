/** Entry point: connects to KNIME's data service through @knime/ui-extension-service and starts the chat. */
import "./guard.js"; // first: installs the message guard before any other module listens
import { JsonDataService } from "@knime/ui-extension-service";
import { ChatView } from "./view.js";

async function main() {
  const service = await JsonDataService.getInstance();
  const call = (method, ...options) => service.data({ method, options });
  await new ChatView(document.querySelector(".chat"), call).start();
}

main();
