/**
 * Keyword ranking for tool discovery `search` (ADR 0010). Pure and deterministic: the same query
 * over the same tools always gives the same order (ties keep the input order).
 */

export interface SearchableTool {
  /** The name a client calls (namespaced on virtual endpoints). */
  readonly name: string;
  /** The upstream's own name. */
  readonly originalName: string;
  readonly title?: string | undefined;
  readonly description?: string | undefined;
  /** Top-level input property names. */
  readonly parameterNames: readonly string[];
}

export const defaultSearchLimit = 5;
export const maxSearchLimit = 20;

const stopWords = new Set([
  'an',
  'and',
  'are',
  'by',
  'for',
  'from',
  'in',
  'into',
  'is',
  'it',
  'of',
  'on',
  'or',
  'the',
  'this',
  'to',
  'with',
]);

/**
 * Splits text into search terms: camelCase and every non letter/digit separate words; lower case;
 * one-letter terms and stop words dropped; duplicates removed (first occurrence kept).
 */
export function searchTerms(text: string): string[] {
  const spaced = text.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2');
  const terms = spaced
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((term) => term.length > 1 && !stopWords.has(term));
  return [...new Set(terms)];
}

/**
 * A query term matches a tool term when equal; when the query term (3+ letters) is a prefix of the
 * tool term (`iss` finds `issues`); or when the tool term (3+ letters) is a prefix of the query term
 * with at most two more letters (`issues` finds `issue`).
 */
export function termsMatch(queryTerm: string, toolTerm: string): boolean {
  if (queryTerm === toolTerm) return true;
  if (queryTerm.length >= 3 && toolTerm.startsWith(queryTerm)) return true;
  return toolTerm.length >= 3 && queryTerm.startsWith(toolTerm) && queryTerm.length - toolTerm.length <= 2;
}

interface IndexedTool {
  readonly tool: SearchableTool;
  readonly nameTerms: readonly string[];
  readonly fieldTerms: readonly string[];
  readonly descriptionTerms: readonly string[];
}

/**
 * The best `limit` tools for `query`. Per query term a tool scores 3 when the term is in its name,
 * else 2 in its title or parameter names, else 1 in its description; each term's score is weighted
 * by ln(1 + N/df) (rare terms count more). A query equal to a tool's exposed or original name adds
 * 100, even for names made of stop words or single letters. Tools scoring 0 are left out.
 */
export function searchTools<Tool extends SearchableTool>(tools: readonly Tool[], query: string, limit = defaultSearchLimit): Tool[] {
  const wanted = Math.max(1, Math.min(maxSearchLimit, Math.floor(limit)));
  const terms = searchTerms(query);
  const exact = query.trim().toLowerCase();
  const indexed = tools.map(indexTool);
  const levels = terms.map((term) => indexed.map((entry) => termLevel(entry, term)));
  const documentFrequency = levels.map((perTool) => perTool.filter((level) => level > 0).length);
  const scored = indexed.map((entry, index) => {
    let score = 0;
    levels.forEach((perTool, termIndex) => {
      const level = perTool[index] ?? 0;
      const frequency = documentFrequency[termIndex] ?? 0;
      if (level > 0 && frequency > 0) score += level * Math.log(1 + tools.length / frequency);
    });
    if (exact !== '' && (entry.tool.name.toLowerCase() === exact || entry.tool.originalName.toLowerCase() === exact)) score += 100;
    return { tool: tools[index] as Tool, score, index };
  });
  return scored
    .filter((entry) => entry.score > 0)
    .sort((left, right) => right.score - left.score || left.index - right.index)
    .slice(0, wanted)
    .map((entry) => entry.tool);
}

function indexTool(tool: SearchableTool): IndexedTool {
  return {
    tool,
    nameTerms: searchTerms(tool.name),
    fieldTerms: searchTerms([tool.title ?? '', ...tool.parameterNames].join(' ')),
    descriptionTerms: searchTerms(tool.description ?? ''),
  };
}

function termLevel(entry: IndexedTool, term: string): number {
  const found = (terms: readonly string[]) => terms.some((toolTerm) => termsMatch(term, toolTerm));
  if (found(entry.nameTerms)) return 3;
  if (found(entry.fieldTerms)) return 2;
  return found(entry.descriptionTerms) ? 1 : 0;
}
