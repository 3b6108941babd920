// The sockets following each instance, keyed by instance id (not name), so a reused name never inherits them.
import type { Socket } from 'socket.io';

export class Subscribers {
  private readonly byInstance = new Map<string, Set<Socket>>();

  /** Follows the instance until the socket disconnects. */
  add(instanceId: string, socket: Socket): void {
    let sockets = this.byInstance.get(instanceId);
    if (!sockets) {
      sockets = new Set();
      this.byInstance.set(instanceId, sockets);
    }
    sockets.add(socket);
    socket.once('disconnect', () => {
      const current = this.byInstance.get(instanceId);
      current?.delete(socket);
      if (current?.size === 0) this.byInstance.delete(instanceId);
    });
  }

  of(instanceId: string): ReadonlySet<Socket> {
    return this.byInstance.get(instanceId) ?? new Set();
  }

  /** Disconnects every socket of the instance from its namespace (the client is told, and does not reconnect). */
  drop(instanceId: string): void {
    for (const socket of [...this.of(instanceId)]) socket.disconnect();
  }

  dropAll(): void {
    for (const instanceId of [...this.byInstance.keys()]) this.drop(instanceId);
  }

  get size(): number {
    let total = 0;
    for (const sockets of this.byInstance.values()) total += sockets.size;
    return total;
  }
}
