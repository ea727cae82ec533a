/**
 * A `LIMIT` whose value is bound at each run, for the statements run on every claim, poll and feed page. SQLite plans
 * with the value bound to a bare `LIMIT ?`, so each new binding prepares the whole statement again (a wide claim
 * statement costs tens of microseconds to parse and plan). `? + 0` is an expression the planner does not look into:
 * the statement keeps its plan. Use it only where the plan does not depend on the limit (a forced index, a rowid
 * range); a list whose best plan depends on its page size keeps `LIMIT ?`.
 */
export const BOUND_LIMIT = 'LIMIT ? + 0';
