import CheckCircle from "@mui/icons-material/CheckCircle";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import LinearProgress from "@mui/material/LinearProgress";
import Typography from "@mui/material/Typography";
import { useQuery } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { solveProofOfWork } from "../../lib/pow.ts";
import { useAccountApi } from "../../lib/use-account-api.ts";

/**
 * The captcha of the sign-up and password-reset forms, as the deployment configures it
 * (`GET /auth/v1/captcha`): the built-in proof of work (solved in the background, with
 * progress), Google reCAPTCHA, or nothing. `response` is what the form sends as
 * `g-recaptcha-response`; `ready` says whether the form may be sent.
 */
export interface Captcha {
  /** The deployment's captcha is not known yet: the form waits (a submit now would be refused). */
  loading: boolean;
  ready: boolean;
  response: string | undefined;
  /** A captcha response is single-use: get a fresh one after a failed submit. */
  reset: () => void;
  element: React.ReactNode;
}

declare global {
  interface Window {
    grecaptcha?: {
      render(element: HTMLElement, options: { sitekey: string; callback: (response: string) => void }): number;
      reset(id?: number): void;
    };
    flotillaRecaptchaLoaded?: () => void;
  }
}

function loadRecaptcha(): Promise<void> {
  if (window.grecaptcha?.render) return Promise.resolve();
  return new Promise((resolve, reject) => {
    window.flotillaRecaptchaLoaded = () => resolve();
    const script = document.createElement("script");
    script.src = "https://www.google.com/recaptcha/api.js?onload=flotillaRecaptchaLoaded&render=explicit";
    script.async = true;
    script.onerror = () => reject(new Error("reCAPTCHA could not be loaded"));
    document.head.append(script);
  });
}

export function useCaptcha(): Captcha {
  const { t } = useTranslation();
  const api = useAccountApi();
  const config = useQuery({
    queryKey: ["captcha"],
    queryFn: () => api.captcha(),
    staleTime: 0,
    gcTime: 0,
    retry: 1,
    meta: { handlesErrors: true },
  });
  const [response, setResponse] = useState<string>();
  const [progress, setProgress] = useState(0);
  const [failed, setFailed] = useState(false);
  const recaptchaBox = useRef<HTMLDivElement>(null);
  const recaptchaId = useRef<number | undefined>(undefined);
  const data = config.data;

  useEffect(() => {
    if (data?.kind !== "pow") return;
    const controller = new AbortController();
    setResponse(undefined);
    setProgress(0);
    solveProofOfWork(data.challenge, data.difficulty, { onProgress: setProgress, signal: controller.signal }).then(
      setResponse,
      () => undefined,
    );
    return () => controller.abort();
  }, [data]);

  useEffect(() => {
    if (data?.kind !== "recaptcha" || !data.siteKey) return;
    const siteKey = data.siteKey;
    loadRecaptcha().then(
      () => {
        if (recaptchaBox.current && window.grecaptcha && recaptchaId.current === undefined) {
          recaptchaId.current = window.grecaptcha.render(recaptchaBox.current, {
            sitekey: siteKey,
            callback: setResponse,
          });
        }
      },
      () => setFailed(true),
    );
  }, [data]);

  const reset = useCallback(() => {
    setResponse(undefined);
    if (data?.kind === "pow") void config.refetch();
    if (data?.kind === "recaptcha") window.grecaptcha?.reset(recaptchaId.current);
  }, [data, config]);

  const kind = data?.kind;
  const ready = kind === "off" || response !== undefined;
  let element: React.ReactNode = null;
  if (config.isError || failed) {
    element = (
      <Alert
        severity="error"
        action={
          <Button color="inherit" size="small" onClick={() => void config.refetch()}>
            {t("captcha.retry")}
          </Button>
        }
      >
        {t("captcha.failed")}
      </Alert>
    );
  } else if (kind === "pow") {
    element = (
      <Box
        role="status"
        aria-label={t("captcha.label")}
        sx={{ border: 1, borderColor: "divider", borderRadius: 1, px: 1.5, py: 1.25, bgcolor: "background.paper" }}
      >
        {response ? (
          <Box sx={{ display: "flex", alignItems: "center", gap: 1 }}>
            <CheckCircle color="success" fontSize="small" />
            <Typography variant="body2">{t("captcha.solved")}</Typography>
          </Box>
        ) : (
          <>
            <Typography variant="body2" color="text.secondary" sx={{ mb: 0.75 }}>
              {t("captcha.solving", { percent: Math.floor(progress * 100) })}
            </Typography>
            <LinearProgress variant="determinate" value={progress * 100} aria-hidden />
          </>
        )}
      </Box>
    );
  } else if (kind === "recaptcha") {
    element = <Box ref={recaptchaBox} aria-label={t("captcha.label")} />;
  }
  return { loading: config.isPending, ready, response, reset, element };
}
