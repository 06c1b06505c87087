import { useStdout } from "ink";
import { useEffect, useState } from "react";

export interface Size {
  columns: number;
  rows: number;
}

/** The terminal's size, updated when it is resized. */
export function useTerminalSize(): Size {
  const { stdout } = useStdout();
  const read = (): Size => ({ columns: stdout.columns || 80, rows: stdout.rows || 24 });
  const [size, setSize] = useState(read);
  useEffect(() => {
    const onResize = () => setSize(read());
    stdout.on("resize", onResize);
    return () => {
      stdout.off("resize", onResize);
    };
  }, [stdout]);
  return size;
}
