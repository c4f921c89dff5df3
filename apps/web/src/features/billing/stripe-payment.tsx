import { Alert, Box, Button, Dialog, DialogActions, DialogContent, DialogTitle, Typography } from "@mui/material";
import type { Stripe, StripeElements } from "@stripe/stripe-js";
import { loadStripe } from "@stripe/stripe-js/pure";
import { type FormEvent, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { showToast } from "../../lib/toasts.ts";
import { useCaptcha } from "../auth/captcha.tsx";
import { type BillingApi, type BillingInfo, billingErrorText, requireClientSecret } from "./api.ts";
import { paymentFormBlocker } from "./model.ts";
import { dialogActionsSx } from "./ui.tsx";

/** Stripe.js is only fetched when the payment dialog opens with Stripe as the provider. */
let stripePromise: Promise<Stripe | null> | undefined;
const stripeOf = (publishableKey: string) => {
  stripePromise ??= loadStripe(publishableKey);
  return stripePromise;
};

/**
 * The payment dialog when the deployment bills through Stripe (STRIPE_SECRET_KEY): card and bank
 * details go from Stripe's own Payment Element to Stripe, never through this server. The setup
 * intent is created (with the captcha), Stripe confirms it — in place, or after a bank's check on
 * another page, from which Stripe returns to the billing page with `?setup-intent=` and the plan
 * to propose (spec 3 §4 Plan change) — and the server stores the confirmed method (`token_id`).
 */
export function StripePaymentDialog(props: {
  open: boolean;
  orgId: number;
  api: BillingApi;
  publishableKey: string;
  notice?: string;
  /** The plan change waiting for this payment method, carried through a redirect. */
  thenPropose?: { code: string; cycle: string };
  onSaved: (info: BillingInfo) => void | Promise<void>;
  onClose: () => void;
}) {
  const { t } = useTranslation();
  const captcha = useCaptcha();
  const mountPoint = useRef<HTMLDivElement>(null);
  const [session, setSession] = useState<{ stripe: Stripe; elements: StripeElements; intentId: string }>();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  // Once the form is there, Stripe's Payment Element goes into it.
  useEffect(() => {
    if (!session || !mountPoint.current) return;
    const element = session.elements.create("payment");
    element.mount(mountPoint.current);
    return () => element.destroy();
  }, [session]);

  const close = () => {
    if (busy) return;
    setSession(undefined);
    setError(undefined);
    props.onClose();
  };

  // Step 1: the captcha, then a setup intent whose client secret opens Stripe's form.
  const start = async () => {
    const blocker = paymentFormBlocker(captcha);
    if (blocker) {
      setError(t(blocker));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const stripe = await stripeOf(props.publishableKey);
      if (!stripe) throw new Error(t("billing.errors.submitting_billing_form_before_initialization"));
      const intent = await props.api.createSetupIntent(props.orgId, captcha.response);
      const { client_secret } = requireClientSecret(intent, t("billing.errors.missing_client_secret"));
      setSession({ stripe, elements: stripe.elements({ clientSecret: client_secret }), intentId: intent.id });
    } catch (caught) {
      setError(billingErrorText(caught));
      captcha.reset();
    } finally {
      setBusy(false);
    }
  };

  // Step 2: Stripe confirms the details; the server then takes the confirmed setup intent.
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (!session) return;
    setBusy(true);
    setError(undefined);
    try {
      const back = new URL(window.location.href);
      back.search = new URLSearchParams({
        "setup-intent": session.intentId,
        ...(props.thenPropose
          ? { "then-propose-plan-tier": props.thenPropose.code, "then-propose-plan-cycle": props.thenPropose.cycle }
          : {}),
      }).toString();
      back.hash = "";
      const result = await session.stripe.confirmSetup({
        elements: session.elements,
        confirmParams: { return_url: back.href },
        redirect: "if_required",
      });
      if (result.error) {
        setError(result.error.message ?? t("errors.unexpected"));
        return;
      }
      const info = await props.api.saveInfo(props.orgId, session.intentId);
      setSession(undefined);
      await props.onSaved(info);
    } catch (caught) {
      // A failed billing-info update is also a toast (spec 3 §8).
      setError(billingErrorText(caught));
      showToast("error", billingErrorText(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog open={props.open} onClose={close} maxWidth="sm" fullWidth aria-labelledby="stripe-payment-title">
      <Box component="form" noValidate onSubmit={submit}>
        <DialogTitle id="stripe-payment-title">{t("billing.payment_dialog_title")}</DialogTitle>
        <DialogContent>
          {props.notice ? (
            <Alert severity="info" sx={{ mb: 2 }}>
              {props.notice}
            </Alert>
          ) : null}
          {error ? (
            <Alert severity="error" sx={{ mb: 2 }}>
              {error}
            </Alert>
          ) : null}
          {session ? (
            <Box ref={mountPoint} sx={{ minHeight: 120 }} />
          ) : (
            <>
              <Typography variant="body2" sx={{ mb: 2 }}>
                {t("billing.stripe_intro")}
              </Typography>
              {captcha.element ? <Box sx={{ mt: 2 }}>{captcha.element}</Box> : null}
            </>
          )}
        </DialogContent>
        <DialogActions sx={dialogActionsSx}>
          <Button onClick={close} disabled={busy}>
            {t("billing.cancel")}
          </Button>
          {session ? (
            <Button type="submit" variant="contained" loading={busy}>
              {t("billing.save")}
            </Button>
          ) : (
            <Button variant="contained" onClick={() => void start()} loading={busy}>
              {t("billing.continue")}
            </Button>
          )}
        </DialogActions>
      </Box>
    </Dialog>
  );
}
