import { describe, expect, it } from 'vitest';
import { searchTerms, searchTools, termsMatch, type SearchableTool } from './tool-search.ts';

const tool = (name: string, description: string, parameterNames: string[] = [], title?: string): SearchableTool => ({
  name,
  originalName: name.slice(name.indexOf('_') + 1),
  description,
  parameterNames,
  ...(title === undefined ? {} : { title }),
});

const catalog = [
  tool('github_create_issue', 'Create a new issue in a GitHub repository.', ['owner', 'repo', 'title', 'body']),
  tool('github_list_issues', 'List the issues of a GitHub repository.', ['owner', 'repo', 'state']),
  tool('github_merge_pull_request', 'Merge an open pull request.', ['owner', 'repo', 'pull_number']),
  tool('jira_create_ticket', 'Create a Jira ticket (an issue) in a project.', ['project', 'summary'], 'New ticket'),
  tool('files_read', 'Read a file from disk.', ['path']),
];

const names = (query: string, limit?: number) => searchTools(catalog, query, limit).map((found) => found.name);

describe('searchTerms', () => {
  it('splits on punctuation and camelCase, lower-cases, drops stop words, one-letter terms and duplicates', () => {
    expect(searchTerms('createIssue for the GitHub_repo, a HTTPServer x issue')).toEqual([
      'create',
      'issue',
      'git',
      'hub',
      'repo',
      'http',
      'server',
    ]);
    expect(searchTerms('  ')).toEqual([]);
  });

  it('matches exactly, by query prefix of 3+ letters, or by a tool-term prefix at most two letters short', () => {
    expect(termsMatch('issue', 'issue')).toBe(true);
    expect(termsMatch('iss', 'issues')).toBe(true);
    expect(termsMatch('is', 'issues')).toBe(false);
    expect(termsMatch('issues', 'issue')).toBe(true);
    expect(termsMatch('issuesxyz', 'issue')).toBe(false);
    expect(termsMatch('rep', 're')).toBe(false);
  });
});

describe('searchTools', () => {
  it('ranks name matches over descriptions, rarer terms higher', () => {
    expect(names('create issue')).toEqual(['github_create_issue', 'jira_create_ticket', 'github_list_issues']);
  });

  it('keeps the input order between equal scores and cuts at the limit', () => {
    expect(names('issues', 1)).toEqual(['github_create_issue']);
    expect(names('issues', 2)).toEqual(['github_create_issue', 'github_list_issues']);
  });

  it('finds a tool through a parameter name or its title', () => {
    expect(names('pull number')[0]).toBe('github_merge_pull_request');
    expect(names('number')).toEqual(['github_merge_pull_request']);
    expect(names('new ticket')[0]).toBe('jira_create_ticket');
  });

  it('puts an exact exposed or original name first, even made of stop words or single letters', () => {
    expect(names('create_ticket')[0]).toBe('jira_create_ticket');
    expect(names('GITHUB_LIST_ISSUES')[0]).toBe('github_list_issues');
    const odd = [tool('x_a', 'Nothing useful.'), tool('x_to', 'Nothing either.')];
    expect(searchTools(odd, 'to').map((found) => found.name)).toEqual(['x_to']);
    expect(searchTools(odd, 'a').map((found) => found.name)).toEqual(['x_a']);
  });

  it('returns nothing for unrelated or empty queries, and clamps the limit to 1..20', () => {
    expect(names('weather forecast')).toEqual([]);
    expect(names('')).toEqual([]);
    expect(names('repository', 0)).toHaveLength(1);
    const many = Array.from({ length: 30 }, (_, index) => tool(`s_tool${index}`, 'A repository tool.'));
    expect(searchTools(many, 'repository', 100)).toHaveLength(20);
  });
});
