import { APP_VERSION } from "@flotilla/domain";
import CheckCircleOutlineOutlined from "@mui/icons-material/CheckCircleOutlineOutlined";
import Visibility from "@mui/icons-material/Visibility";
import VisibilityOff from "@mui/icons-material/VisibilityOff";
import Alert from "@mui/material/Alert";
import Box from "@mui/material/Box";
import Button from "@mui/material/Button";
import IconButton from "@mui/material/IconButton";
import InputAdornment from "@mui/material/InputAdornment";
import Stack from "@mui/material/Stack";
import TextField from "@mui/material/TextField";
import Typography from "@mui/material/Typography";
import { useMutation } from "@tanstack/react-query";
import { getRouteApi, useRouter } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { useTranslation } from "react-i18next";
import { useServices } from "../../app-services.tsx";
import { Wordmark } from "../../components/logo.tsx";
import { useDocumentTitle } from "../../components/use-document-title.ts";
import { errorText } from "../../lib/errors.ts";
import { headerColors } from "../../theme.ts";
import { safeRedirect, sessionKeys } from "./session.ts";

const loginRoute = getRouteApi("/login");

/** Sign-in (spec 1 §2.3): email and password; the header says the first 10 devices are free. */
export function LoginPage() {
  const { t } = useTranslation();
  useDocumentTitle(t("login.page_title"));
  const { sdk, queryClient } = useServices();
  const router = useRouter();
  const search = loginRoute.useSearch();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [showPassword, setShowPassword] = useState(false);
  const [touched, setTouched] = useState(false);

  const login = useMutation({
    mutationFn: (credentials: { email: string; password: string }) => sdk.auth.login(credentials),
    meta: { reportErrors: false },
    onSuccess: () => {
      queryClient.clear();
      queryClient.setQueryData(sessionKeys.loggedIn, true);
      router.history.push(safeRedirect(search.redirect) ?? "/");
    },
  });

  const emailError = touched && email.trim() === "" ? t("login.email_required") : undefined;
  const passwordError = touched && password === "" ? t("login.password_required") : undefined;

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setTouched(true);
    if (email.trim() === "" || password === "") return;
    login.mutate({ email: email.trim(), password });
  };

  return (
    <Box sx={{ minHeight: "100%", display: "flex", bgcolor: "background.default" }}>
      <Box
        sx={{
          display: { xs: "none", md: "flex" },
          flexDirection: "column",
          justifyContent: "space-between",
          width: "42%",
          maxWidth: 560,
          p: 5,
          color: headerColors.text,
          bgcolor: headerColors.background,
          backgroundImage:
            "radial-gradient(90% 70% at 100% 100%, rgba(129,140,248,0.28) 0%, rgba(129,140,248,0) 70%), linear-gradient(160deg, #1f1d4d 0%, #151a23 55%, #151a23 100%)",
        }}
      >
        <Wordmark size={28} color={headerColors.text} />
        <Box>
          <Typography
            component="p"
            sx={{ fontSize: "1.75rem", fontWeight: 650, lineHeight: 1.25, mb: 3, maxWidth: 380 }}
          >
            {t("login.side_title")}
          </Typography>
          <Stack component="ul" spacing={1.5} sx={{ listStyle: "none", p: 0, m: 0 }}>
            {(["watch", "release", "team"] as const).map((point) => (
              <Box component="li" key={point} sx={{ display: "flex", gap: 1.5, alignItems: "flex-start" }}>
                <CheckCircleOutlineOutlined sx={{ fontSize: 20, color: "#a5b4fc", mt: "1px" }} />
                <Typography sx={{ color: headerColors.text, fontSize: "0.9375rem" }}>
                  {t(`login.side_points.${point}`)}
                </Typography>
              </Box>
            ))}
          </Stack>
        </Box>
        <Typography variant="body2" sx={{ color: headerColors.muted }}>
          {t("app.tagline")} · {t("app.version", { version: APP_VERSION })}
        </Typography>
      </Box>

      <Box sx={{ flex: 1, display: "flex", alignItems: "center", justifyContent: "center", px: 3, py: 6 }}>
        <Box sx={{ width: "100%", maxWidth: 380 }}>
          <Box sx={{ display: { xs: "block", md: "none" }, mb: 4 }}>
            <Wordmark size={28} />
          </Box>
          <Box component="header" sx={{ mb: 3 }}>
            <Typography variant="h1" component="h1" sx={{ fontSize: "1.625rem" }}>
              {t("login.title")}
            </Typography>
            <Typography color="text.secondary" sx={{ mt: 0.75, fontSize: "0.9375rem" }}>
              {t("login.free_devices")}
            </Typography>
          </Box>

          <Box component="form" noValidate onSubmit={submit}>
            <Stack spacing={2}>
              {login.isError ? (
                <Alert severity="error" role="alert">
                  {errorText(login.error)}
                </Alert>
              ) : null}
              <TextField
                label={t("login.email")}
                type="email"
                name="email"
                autoComplete="username"
                autoFocus
                size="medium"
                required
                value={email}
                onChange={(event) => setEmail(event.target.value)}
                error={Boolean(emailError)}
                helperText={emailError}
                slotProps={{ inputLabel: { required: false } }}
              />
              <TextField
                label={t("login.password")}
                type={showPassword ? "text" : "password"}
                name="password"
                autoComplete="current-password"
                size="medium"
                required
                value={password}
                onChange={(event) => setPassword(event.target.value)}
                error={Boolean(passwordError)}
                helperText={passwordError}
                slotProps={{
                  inputLabel: { required: false },
                  input: {
                    endAdornment: (
                      <InputAdornment position="end">
                        <IconButton
                          edge="end"
                          size="small"
                          aria-label={showPassword ? t("login.hide_password") : t("login.show_password")}
                          onClick={() => setShowPassword((shown) => !shown)}
                        >
                          {showPassword ? <VisibilityOff fontSize="small" /> : <Visibility fontSize="small" />}
                        </IconButton>
                      </InputAdornment>
                    ),
                  },
                }}
              />
              <Button type="submit" variant="contained" size="large" fullWidth loading={login.isPending}>
                {t("login.submit")}
              </Button>
            </Stack>
          </Box>
        </Box>
      </Box>
    </Box>
  );
}
