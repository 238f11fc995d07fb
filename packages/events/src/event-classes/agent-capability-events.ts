// What an agent does around its model calls: reasoning, MCP servers, observing and planning steps,
// skills and its logs.
import { defineEvent } from '../base-event.js';

export class AgentReasoningStartedEvent extends defineEvent('agent_reasoning_started') {}
export class AgentReasoningCompletedEvent extends defineEvent('agent_reasoning_completed') {}
export class AgentReasoningFailedEvent extends defineEvent('agent_reasoning_failed') {}
export class MCPConnectionStartedEvent extends defineEvent('mcp_connection_started') {}
export class MCPConnectionCompletedEvent extends defineEvent('mcp_connection_completed') {}
export class MCPConnectionFailedEvent extends defineEvent('mcp_connection_failed') {}
export class MCPToolExecutionStartedEvent extends defineEvent('mcp_tool_execution_started') {}
export class MCPToolExecutionCompletedEvent extends defineEvent('mcp_tool_execution_completed') {}
export class MCPToolExecutionFailedEvent extends defineEvent('mcp_tool_execution_failed') {}
export class MCPConfigFetchFailedEvent extends defineEvent('mcp_config_fetch_failed') {}
export class StepObservationStartedEvent extends defineEvent('step_observation_started') {}
export class StepObservationCompletedEvent extends defineEvent('step_observation_completed') {}
export class StepObservationFailedEvent extends defineEvent('step_observation_failed') {}
export class PlanRefinementEvent extends defineEvent('plan_refinement') {}
export class PlanReplanTriggeredEvent extends defineEvent('plan_replan_triggered') {}
export class GoalAchievedEarlyEvent extends defineEvent('goal_achieved_early') {}
export class SkillDiscoveryStartedEvent extends defineEvent('skill_discovery_started') {}
export class SkillDiscoveryCompletedEvent extends defineEvent('skill_discovery_completed') {}
export class SkillLoadedEvent extends defineEvent('skill_loaded') {}
export class SkillActivatedEvent extends defineEvent('skill_activated') {}
export class SkillLoadFailedEvent extends defineEvent('skill_load_failed') {}
export class AgentLogsStartedEvent extends defineEvent('agent_logs_started') {}
export class AgentLogsExecutionEvent extends defineEvent('agent_logs_execution') {}
