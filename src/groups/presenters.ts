// The group answers: Evolution's summary of a group (findGroupInfos, fetchAllGroups) from the messenger's metadata.
import type { GroupMetadata } from '../core/connector.js';

/**
 * Evolution's summary object: the metadata's main fields, the picture's URL (null when hidden or none), `size` as
 * the participant count, and the participants when asked for.
 */
export function groupSummary(metadata: GroupMetadata, pictureUrl: string | null, withParticipants: boolean) {
  return {
    id: metadata.id,
    subject: metadata.subject,
    ...(metadata.subjectOwner !== undefined ? { subjectOwner: metadata.subjectOwner } : {}),
    ...(metadata.subjectTime !== undefined ? { subjectTime: metadata.subjectTime } : {}),
    pictureUrl,
    size: metadata.participants.length,
    ...(metadata.creation !== undefined ? { creation: metadata.creation } : {}),
    ...(metadata.owner !== undefined ? { owner: metadata.owner } : {}),
    ...(metadata.desc !== undefined ? { desc: metadata.desc } : {}),
    ...(metadata.descId !== undefined ? { descId: metadata.descId } : {}),
    restrict: metadata.restrict,
    announce: metadata.announce,
    ...(withParticipants ? { participants: metadata.participants } : {}),
    isCommunity: metadata.isCommunity,
    isCommunityAnnounce: metadata.isCommunityAnnounce,
    ...(metadata.linkedParent !== undefined ? { linkedParent: metadata.linkedParent } : {}),
  };
}
