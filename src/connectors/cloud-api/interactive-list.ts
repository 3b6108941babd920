// A stored `listMessage` as a Cloud API interactive list, checked against Meta's documented limits first.
import { ProviderError } from '../../core/connector.js';

/** Meta's limits for interactive list messages (characters, counts). */
const listLimits = {
  header: 60,
  body: 4096,
  footer: 60,
  button: 20,
  sections: 10,
  rows: 10,
  sectionTitle: 24,
  rowTitle: 24,
  rowDescription: 72,
  rowId: 200,
} as const;

const str = (value: unknown): string => (typeof value === 'string' ? value : '');
const objects = (value: unknown): Record<string, unknown>[] =>
  Array.isArray(value) ? value.filter((v): v is Record<string, unknown> => typeof v === 'object' && v !== null) : [];

/**
 * `{title, description, buttonText, footerText, sections: [{title, rows: [{title, description, rowId}]}]}` to
 * `{type: "list", header, body, footer, action: {button, sections: [{title, rows: [{id, title, description}]}]}}`.
 * The title is the header and the description the body; without a description the title becomes the body (Meta requires
 * one). Every problem is reported at once, as a 400 naming the integration and the field.
 */
export function interactiveList(list: Record<string, unknown>): Record<string, unknown> {
  const problems: string[] = [];
  const tooLong = (field: string, value: string, max: number) => {
    if (value.length > max) problems.push(`${field} must be at most ${max} characters on WHATSAPP-BUSINESS (Meta's limit; it has ${value.length})`);
  };
  const title = str(list.title).trim();
  const description = str(list.description).trim();
  const footer = str(list.footerText).trim();
  const button = str(list.buttonText).trim();
  const header = description ? title : '';
  const body = description || title;
  if (!body) problems.push('title or description is required: the list needs a body text on WHATSAPP-BUSINESS');
  if (!button) problems.push('buttonText is required on WHATSAPP-BUSINESS');
  if (header) tooLong('title', header, listLimits.header);
  tooLong(description ? 'description' : 'title', body, listLimits.body);
  tooLong('footerText', footer, listLimits.footer);
  tooLong('buttonText', button, listLimits.button);

  const sections = objects(list.sections);
  if (sections.length === 0) problems.push('sections must have at least one section');
  if (sections.length > listLimits.sections) problems.push(`sections must have at most ${listLimits.sections} sections on WHATSAPP-BUSINESS (Meta's limit)`);
  const sectionTitles = new Set<string>();
  const rowIds = new Set<string>();
  let rowCount = 0;
  const graphSections = sections.map((section, s) => {
    const sectionTitle = str(section.title).trim();
    if (!sectionTitle && sections.length > 1) problems.push(`sections[${s}].title is required when the list has more than one section`);
    tooLong(`sections[${s}].title`, sectionTitle, listLimits.sectionTitle);
    if (sectionTitle && sectionTitles.has(sectionTitle)) problems.push(`sections[${s}].title "${sectionTitle}" is used twice; section titles must be unique`);
    sectionTitles.add(sectionTitle);
    const rows = objects(section.rows);
    if (rows.length === 0) problems.push(`sections[${s}].rows must have at least one row`);
    const graphRows = rows.map((row, r) => {
      rowCount += 1;
      const field = `sections[${s}].rows[${r}]`;
      const rowTitle = str(row.title).trim();
      const rowDescription = str(row.description).trim();
      const id = str(row.rowId).trim() || `row-${rowCount}`;
      if (!rowTitle) problems.push(`${field}.title is required`);
      tooLong(`${field}.title`, rowTitle, listLimits.rowTitle);
      tooLong(`${field}.description`, rowDescription, listLimits.rowDescription);
      tooLong(`${field}.rowId`, id, listLimits.rowId);
      if (rowIds.has(id)) problems.push(`${field}.rowId "${id}" is used twice; row ids must be unique in the list`);
      rowIds.add(id);
      return { id, title: rowTitle, ...(rowDescription ? { description: rowDescription } : {}) };
    });
    return { ...(sectionTitle ? { title: sectionTitle } : {}), rows: graphRows };
  });
  if (rowCount > listLimits.rows)
    problems.push(`the list has ${rowCount} rows; WHATSAPP-BUSINESS allows at most ${listLimits.rows} rows across all sections (Meta's limit)`);
  if (problems.length > 0) throw new ProviderError('refused', problems);

  return {
    type: 'list',
    ...(header ? { header: { type: 'text', text: header } } : {}),
    body: { text: body },
    ...(footer ? { footer: { text: footer } } : {}),
    action: { button, sections: graphSections },
  };
}
