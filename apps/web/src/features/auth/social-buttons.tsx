import Button from "@mui/material/Button";
import Divider from "@mui/material/Divider";
import Stack from "@mui/material/Stack";
import { useQuery } from "@tanstack/react-query";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { socialProvidersQuery, startSocialSignIn } from "./social.ts";

/**
 * One button per configured social provider on the sign-up page (spec 1 §2.3): "Sign up with
 * {name}"; nothing when no provider is configured. The login page has its own, as plain elements.
 */
export function SocialButtons(props: { redirect?: string; divider?: "before" | "after" }) {
  const { t } = useTranslation();
  const { config } = useServices();
  const providers = useQuery({ ...socialProvidersQuery(config.apiUrl), throwOnError: false });
  const list = providers.data ?? [];
  if (list.length === 0) return null;
  const divider = <Divider sx={{ typography: "body2", color: "text.secondary" }}>{t("signup.or")}</Divider>;
  return (
    <>
      {props.divider === "before" ? divider : null}
      <Stack spacing={1.5} data-testid="social-buttons">
        {list.map((provider) => (
          <Button
            key={provider.slug}
            variant="outlined"
            size="large"
            fullWidth
            onClick={() => startSocialSignIn(config.apiUrl, provider.slug, props.redirect)}
          >
            {t("signup.social", { provider: provider.name })}
          </Button>
        ))}
      </Stack>
      {props.divider === "after" ? divider : null}
    </>
  );
}
