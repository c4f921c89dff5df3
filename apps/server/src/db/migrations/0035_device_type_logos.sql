-- Device types have a logo and contract assets as balena's model has them (balena-sdk's
-- deviceType.get and getBySlugOrName read `logo`, the contract's `assets.logo.url` and `aliases`):
-- `logo` is an SVG data URL, and the same URL is the contract's logo asset. Flotilla draws its own
-- logos: a board in the colour of the type's family, labelled with the family (or the CPU
-- architecture of generic boards). A device type added by a later migration gets one the same way.
WITH drawn AS (
  SELECT dt.id,
    CASE f.slug
      WHEN 'raspberrypi' THEN '#c2185b' WHEN 'jetson' THEN '#689f38' WHEN 'nuc' THEN '#1565c0'
      WHEN 'beaglebone' THEN '#6d4c41' WHEN 'odroid' THEN '#ef6c00' WHEN 'balenafin' THEN '#37474f'
      ELSE '#546e7a' END AS colour,
    CASE f.slug
      WHEN 'raspberrypi' THEN 'Pi' WHEN 'jetson' THEN 'Jetson' WHEN 'nuc' THEN 'NUC' WHEN 'beaglebone' THEN 'Beagle'
      WHEN 'odroid' THEN 'ODROID' WHEN 'balenafin' THEN 'Fin'
      ELSE CASE WHEN dt.slug LIKE 'qemu%' THEN 'QEMU' ELSE upper(a.slug) END END AS label
  FROM "device_type" dt
  JOIN "cpu_architecture" a ON a.id = dt.is_of__cpu_architecture
  LEFT JOIN "device_family" f ON f.id = dt.belongs_to__device_family
), svg AS (
  SELECT id, format(
    '<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">'
    || '<g fill="%1$s"><rect x="14" y="4" width="4" height="8" rx="1"/><rect x="24" y="4" width="4" height="8" rx="1"/>'
    || '<rect x="36" y="4" width="4" height="8" rx="1"/><rect x="46" y="4" width="4" height="8" rx="1"/>'
    || '<rect x="14" y="52" width="4" height="8" rx="1"/><rect x="24" y="52" width="4" height="8" rx="1"/>'
    || '<rect x="36" y="52" width="4" height="8" rx="1"/><rect x="46" y="52" width="4" height="8" rx="1"/>'
    || '<rect x="4" y="10" width="56" height="44" rx="7"/></g>'
    || '<rect x="12" y="20" width="40" height="24" rx="3" fill="#ffffff"/>'
    || '<text x="32" y="36.5" fill="%1$s" font-family="Helvetica,Arial,sans-serif" font-size="%2$s" font-weight="700" text-anchor="middle">%3$s</text>'
    || '</svg>',
    colour, CASE WHEN length(label) > 4 THEN '9' ELSE '12' END, label) AS markup
  FROM drawn
), logos AS (
  SELECT id, 'data:image/svg+xml;base64,' || replace(encode(convert_to(markup, 'UTF8'), 'base64'), E'\n', '') AS url
  FROM svg
)
UPDATE "device_type" dt SET
  "logo" = l.url,
  "contract" = COALESCE(dt.contract, '{}'::jsonb)
    || jsonb_build_object('assets', COALESCE(dt.contract -> 'assets', '{}'::jsonb)
         || jsonb_build_object('logo', jsonb_build_object('url', l.url, 'name', 'logo')))
    || jsonb_build_object('aliases', COALESCE(
         (SELECT jsonb_agg(x.is_referenced_by__alias ORDER BY x.is_referenced_by__alias)
            FROM "device_type_alias" x WHERE x.device_type = dt.id), jsonb_build_array(dt.slug)))
FROM logos l
WHERE l.id = dt.id;
