// Delivery lanes: the webhook deliveries to one kind of destination of one instance, delivered in order.
export type DeliveryTarget = 'instance' | 'global';

/** Deliveries to one kind of destination of one instance, delivered in order. */
export interface DeliveryLane {
  target: DeliveryTarget;
  instanceId: string | null;
}
