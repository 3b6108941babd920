// What an instance page hands each of its tabs: the session, the instance as listed, its state and live events.
import type { ConnectionState, InstanceListing } from '../api';
import type { LiveEvent, LiveStatus } from '../live';
import type { Session } from '../session';

export interface InstanceView {
  session: Session;
  name: string;
  listing: InstanceListing;
  state: ConnectionState;
  /** Events of this instance as they arrive on the websocket (the newest first). */
  events: LiveEvent[];
  live: LiveStatus;
  refresh(): void;
}
