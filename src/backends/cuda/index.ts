import type { BackendModule } from '../backend-module.js';
import { cudaBuild } from './build.js';
import { cudaClock } from './clock.js';
import { cudaDetect } from './detect.js';
import { cudaDoctor } from './doctor.js';
import { cudaPrompt } from './prompt.js';

/** The cuda backend: C++ and CUDA candidates built by `load_inline`, timed on an NVIDIA GPU. Its folder's one export (the registry's entry). */
export const cudaBackend: BackendModule = {
  name: 'cuda',
  detect: cudaDetect,
  build: cudaBuild,
  clock: cudaClock,
  doctor: cudaDoctor,
  prompt: cudaPrompt,
};
