// The agent as a library: the server runs the simulator in-process for the demo.
export { type DeviceHost, DeviceRuntime, type DeviceStats, newStats } from "./device.ts";
export { ApiError, createHttp, type Http } from "./protocol/http.ts";
export { type Identity, registerDevice } from "./protocol/register.ts";
export {
  SIMULATED_LOCATIONS,
  type SimulatedDeviceHandle,
  type Simulator,
  type SimulatorOptions,
  startSimulator,
} from "./sim/simulator.ts";
