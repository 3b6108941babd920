// A sandbox instance as a party on the network: who it is while live and linked.
export interface LinkedParty {
  instanceId: string;
  ownerJid: string;
  profileName: string;
}
