import type { BackendDetect } from '../backend-module.js';

/** The devices of a backend that runs on NVIDIA GPUs: `cuda:<index>` in the GPU lane. */
export const nvidiaDetect: BackendDetect = {
  kind: 'gpu',
  torchDevice: 'cuda',
  deviceName: (index = 0) => `cuda:${index}`,
  needs: 'an NVIDIA GPU',
};
