import { hopscopeQuery } from '../../datasource/query';

/** The alerts query's refId (its history part is `partRefId(ALERTS_REF, 'history')`). */
export const ALERTS_REF = 'alerts';
/** The firing/resolved alerts and the range's transitions; only one rule's with `rule`. */
export const alertsQuery = (rule?: string) => hopscopeQuery(ALERTS_REF, { ruleId: rule });
