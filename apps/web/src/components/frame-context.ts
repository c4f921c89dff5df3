import { createContext, useContext } from "react";

/** True inside the signed-in frame (header + sidebar), so whole-page states know whether to show the brand. */
export const InFrameContext = createContext(false);

export const useInFrame = () => useContext(InFrameContext);
