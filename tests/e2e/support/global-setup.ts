/** Before the suite: the pinned clients in their cache, and the kit packed once. */
import { CLIENTS, ensureClient, type ClientName } from './clients.js';
import { packKit } from './kit.js';
import { templateRepo } from './scratch.js';

export default function setup(): void {
  for (const name of Object.keys(CLIENTS) as ClientName[]) ensureClient(name);
  process.env.FORGE_E2E_TARBALL = packKit();
  process.env.FORGE_E2E_TEMPLATE = templateRepo();
}
