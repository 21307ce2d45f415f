import { z } from 'zod';

/** One proposed idea: a short label and the idea in plain language. */
export interface ProposedIdea {
  label: string;
  text: string;
}

const ideaItemSchema = z.union([
  z.object({ label: z.string().trim().min(1).optional(), idea: z.string().trim().min(1) }),
  z.object({ label: z.string().trim().min(1).optional(), text: z.string().trim().min(1) }),
  z.string().trim().min(1),
]);
const ideaListSchema = z.array(ideaItemSchema).min(1);

/** A label safe to show in a tree: lower-case kebab, at most 40 characters. */
export function labelFrom(text: string): string {
  const words = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, ' ')
    .trim()
    .split(' ')
    .filter(Boolean)
    .slice(0, 5);
  return (words.join('-') || 'idea').slice(0, 40);
}

function fromJson(text: string): ProposedIdea[] | null {
  const block = /```(?:json)?\s*\n([\s\S]*?)```/i.exec(text)?.[1];
  const candidates = [block, text.slice(text.indexOf('['), text.lastIndexOf(']') + 1)].filter(
    (value): value is string => typeof value === 'string' && value.trim().startsWith('['),
  );
  for (const candidate of candidates) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(candidate);
    } catch {
      continue;
    }
    const result = ideaListSchema.safeParse(parsed);
    if (!result.success) continue;
    return result.data.map((item) => {
      const ideaText = typeof item === 'string' ? item : 'idea' in item ? item.idea : item.text;
      const label = typeof item === 'string' || !item.label ? labelFrom(ideaText) : labelFrom(item.label);
      return { label, text: ideaText };
    });
  }
  return null;
}

function fromList(text: string): ProposedIdea[] {
  return text
    .split('\n')
    .map((line) => /^\s*(?:\d+[.)]|[-*•])\s+(.+)$/.exec(line)?.[1]?.trim())
    .filter((line): line is string => Boolean(line) && !line!.startsWith('```'))
    .map((line) => {
      const labelled = /^\*{0,2}([A-Za-z0-9 _-]{2,40}?)\*{0,2}\s*[:—–-]\s+(.+)$/.exec(line);
      return labelled ? { label: labelFrom(labelled[1]!), text: labelled[2]!.trim() } : { label: labelFrom(line), text: line };
    });
}

/**
 * Takes the ideas out of a reply: the JSON array the prompt asks for, or failing that a numbered
 * or bulleted list. Labels are made unique within the reply. Returns an empty list when the reply
 * held no idea (the caller records that as a reply without usable content).
 */
export function parseIdeas(text: string, maxCount: number): ProposedIdea[] {
  const ideas = (fromJson(text) ?? fromList(text)).slice(0, maxCount);
  const seen = new Map<string, number>();
  return ideas.map((idea) => {
    const count = (seen.get(idea.label) ?? 0) + 1;
    seen.set(idea.label, count);
    return count === 1 ? idea : { ...idea, label: `${idea.label}-${count}` };
  });
}
