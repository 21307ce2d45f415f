import type { BackendModule } from '../backend-module.js';
import { cpuBuild } from './build.js';
import { cpuClock } from './clock.js';
import { cpuDetect } from './detect.js';
import { cpuDoctor } from './doctor.js';
import { cpuPrompt } from './prompt.js';

/** The cpu backend: C++ candidates timed on the host's cores. Its folder's one export (the registry's entry). */
export const cpuBackend: BackendModule = {
  name: 'cpu',
  detect: cpuDetect,
  build: cpuBuild,
  clock: cpuClock,
  doctor: cpuDoctor,
  prompt: cpuPrompt,
};
