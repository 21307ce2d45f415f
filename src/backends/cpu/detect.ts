import type { BackendDetect } from '../backend-module.js';

/** The cpu backend evaluates on the host's cores, the one device `cpu`, anywhere. */
export const cpuDetect: BackendDetect = {
  kind: 'cpu',
  torchDevice: 'cpu',
  deviceName: () => 'cpu',
  needs: null,
};
