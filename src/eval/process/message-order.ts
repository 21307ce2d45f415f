import { ROLE_STAGES, type Stage, type WorkerMessage } from './protocol.js';
import type { WorkerRole } from '../worker-role.js';

/**
 * The ordering rules of protocol v1 that hold for every message of a role: `hello` first and only
 * once, with the right role; stages of the role only; one stage at a time; an `end` for the stage
 * that is running. What each role sends between stages is checked by the evaluation itself.
 */
export class MessageOrder {
  readonly role: WorkerRole;
  #helloSeen = false;
  #activeStage: Stage | null = null;

  constructor(role: WorkerRole) {
    this.role = role;
  }

  /** Whether `hello` has arrived. */
  get helloSeen(): boolean {
    return this.#helloSeen;
  }

  /** The stage that started and has not ended (a failed stage never ends), or null. */
  get activeStage(): Stage | null {
    return this.#activeStage;
  }

  /** Checks a message and records it; returns the violation as a sentence, or null. */
  accept(message: WorkerMessage): string | null {
    if (!this.#helloSeen) {
      if (message.type !== 'hello') return `the ${this.role} worker sent \`${message.type}\` before \`hello\``;
      if (message.role !== this.role) return `a ${this.role} worker said hello as \`${message.role}\``;
      this.#helloSeen = true;
      return null;
    }
    if (message.type === 'hello') return `the ${this.role} worker sent \`hello\` twice`;
    if (message.type !== 'stage') return null;
    const stages: readonly string[] = ROLE_STAGES[this.role];
    if (!stages.includes(message.stage)) return `stage \`${message.stage}\` does not belong to the ${this.role} role`;
    if (message.status === 'start') {
      if (this.#activeStage) return `stage \`${message.stage}\` started while \`${this.#activeStage}\` was running`;
      this.#activeStage = message.stage;
      return null;
    }
    if (this.#activeStage !== message.stage) {
      return `stage \`${message.stage}\` ended but \`${this.#activeStage ?? 'no stage'}\` was running`;
    }
    this.#activeStage = null;
    return null;
  }
}
