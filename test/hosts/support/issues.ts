/**
 * The scenario every host test runs: one tool with a name the sandbox cannot call as written
 * (`list-issues`), and three programs a model could write against it. The expected values are
 * what the programs compute and what the dialect's texts say, written out by hand.
 */

export interface Issue {
  repo: string;
  number: number;
  title: string;
}

/** The raw tool name, as a host registers it. */
export const TOOL_NAME = 'list-issues';
/** The identifier the dialect shows the model and binds in the sandbox. */
export const TOOL_IDENTIFIER = 'list_issues';
export const TOOL_DESCRIPTION = 'List the open issues of a repository';

export function listIssues({ repo }: { repo: string }): Issue[] {
  return [
    { repo, number: 1, title: 'Crash on start' },
    { repo, number: 2, title: 'Docs typo' },
  ];
}

/** Calls the tool through the identifier the model was shown, logs at two levels, returns a value. */
export const LISTING_PROGRAM = `async () => {
  const issues = await codemode.${TOOL_IDENTIFIER}({ repo: "acme/app" });
  console.log("found", issues.length);
  console.warn("one is a typo");
  return issues.map((issue) => issue.repo + "#" + issue.number + " " + issue.title);
}`;
export const LISTING_RESULT = ['acme/app#1 Crash on start', 'acme/app#2 Docs typo'];
export const LISTING_LOGS = ['found 2', '[warn] one is a typo'];

/** Logs, then throws. */
export const FAILING_PROGRAM = 'async () => { console.warn("about to fail"); throw new Error("no such repo"); }';
export const FAILING_ERROR = 'no such repo';
export const FAILING_LOGS = ['[warn] about to fail'];

/** Calls a tool the host never declared: the dialect's text for it. */
export const UNKNOWN_TOOL_PROGRAM = 'async () => codemode.close_issue({ number: 1 })';
export const UNKNOWN_TOOL_ERROR = 'Tool "close_issue" not found';
