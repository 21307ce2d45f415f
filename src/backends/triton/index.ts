import type { BackendModule } from '../backend-module.js';
import { tritonBuild } from './build.js';
import { tritonClock } from './clock.js';
import { tritonDetect } from './detect.js';
import { tritonDoctor } from './doctor.js';
import { tritonPrompt } from './prompt.js';

/** The triton backend: `@triton.jit` candidates, timed on an NVIDIA GPU. Its folder's one export (the registry's entry). */
export const tritonBackend: BackendModule = {
  name: 'triton',
  detect: tritonDetect,
  build: tritonBuild,
  clock: tritonClock,
  doctor: tritonDoctor,
  prompt: tritonPrompt,
};
